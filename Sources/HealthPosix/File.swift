// An open file: positioned and whole writes, reads, size, truncation, fsync.
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An open file descriptor on a regular file. Writes always complete (short writes are continued).
///
/// Threading: positioned calls (`write(_:at:)`, `read(count:at:)`) may run concurrently; `write(_:)` uses the
/// shared file offset, so serialise it. `close()` only once no other thread is inside a call.
public final class File: Sendable {
    /// How a file is opened.
    public struct Options: OptionSet, Sendable {
        /// The bits.
        public let rawValue: Int32
        /// Options from their bits.
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// Open for writing as well as reading.
        public static let write = Options(rawValue: 1)
        /// Create the file if it does not exist (implies `write`).
        public static let create = Options(rawValue: 2)
        /// Truncate to zero length on open (implies `write`).
        public static let truncate = Options(rawValue: 4)
        /// Fail with EEXIST if the file exists (with `create`).
        public static let exclusive = Options(rawValue: 8)
        /// Every `write(_:)` appends at the end (on Linux, so does `write(_:at:)`: do not mix them).
        public static let append = Options(rawValue: 16)

        var flags: Int32 {
            var flags = isDisjoint(with: [.write, .create, .truncate, .append]) ? O_RDONLY : O_RDWR
            if contains(.create) { flags |= O_CREAT }
            if contains(.truncate) { flags |= O_TRUNC }
            if contains(.exclusive) { flags |= O_EXCL }
            if contains(.append) { flags |= O_APPEND }
            return flags
        }
    }

    /// The path the file was opened with.
    public let path: String
    private let fd: Int32
    private let closed = Atomic<Bool>(false)

    /// Opens `path`; `permissions` apply when the file is created (then masked by the umask).
    public init(path: String, options: Options = [], permissions: UInt32 = 0o644) throws(SystemError) {
        self.path = path
        self.fd = try Sys.open(path, flags: options.flags, mode: permissions)
    }

    deinit { close() }

    /// Writes all of `bytes` at the file offset (at the end with `.append`).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        var rest = bytes
        while !rest.isEmpty {
            switch try Sys.write(fd, rest) {
            case .processed(let written): rest = UnsafeRawBufferPointer(rebasing: rest[written...])
            case .wouldBlock: throw SystemError(errno: EAGAIN, call: "write(\(path))")
            }
        }
    }

    /// Writes all of `bytes` at the file offset (at the end with `.append`).
    public func write(_ bytes: [UInt8]) throws(SystemError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(SystemError) in try write(raw) } }.get()
    }

    /// Writes all of `bytes` at `offset` (pwrite), leaving the file offset alone.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) {
        var rest = bytes
        var position = offset
        while !rest.isEmpty {
            let written = try Sys.pwrite(fd, rest, offset: position)
            rest = UnsafeRawBufferPointer(rebasing: rest[written...])
            position += Int64(written)
        }
    }

    /// Writes all of `bytes` at `offset` (pwrite), leaving the file offset alone.
    public func write(_ bytes: [UInt8], at offset: Int64) throws(SystemError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(SystemError) in try write(raw, at: offset) } }.get()
    }

    /// Reads up to `count` bytes at `offset` (fewer only at end of file).
    public func read(count: Int, at offset: Int64) throws(SystemError) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: max(0, count))
        let filled = try result.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) -> Int in
                var filled = 0
                while filled < raw.count {
                    let got = try Sys.pread(
                        fd, UnsafeMutableRawBufferPointer(rebasing: raw[filled...]), offset: offset + Int64(filled))
                    if got == 0 { break }
                    filled += got
                }
                return filled
            }
        }.get()
        result.removeLast(result.count - filled)
        return result
    }

    /// Reads the whole file from offset 0; throws EFBIG when it is larger than `maxBytes`.
    public func readAll(maxBytes: Int = .max) throws(SystemError) -> [UInt8] {
        let size = try self.size()
        guard size <= Int64(maxBytes) else { throw SystemError(errno: EFBIG, call: "read(\(path))") }
        var result = try read(count: Int(size), at: 0)
        // The file may have grown since fstat: keep reading until end of file.
        while true {
            let more = try read(count: 64 * 1024, at: Int64(result.count))
            if more.isEmpty { return result }
            guard result.count + more.count <= maxBytes else { throw SystemError(errno: EFBIG, call: "read(\(path))") }
            result += more
        }
    }

    /// The file's size in bytes.
    public func size() throws(SystemError) -> Int64 { Int64(try Sys.fileStatus(fd).st_size) }

    /// The permission bits (such as 0o600).
    public func permissions() throws(SystemError) -> UInt32 { UInt32(try Sys.fileStatus(fd).st_mode) & 0o7777 }

    /// Cuts or extends the file to `length` bytes.
    public func truncate(to length: Int64) throws(SystemError) { try Sys.ftruncate(fd, length: length) }

    /// fsync: data and metadata reach stable storage.
    public func sync() throws(SystemError) { try Sys.fsync(fd) }

    /// fdatasync: data (and the metadata needed to read it back, such as the size) reach stable storage.
    public func syncData() throws(SystemError) { try Sys.fdatasync(fd) }

    /// Closes the descriptor; idempotent.
    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { try? Sys.close(fd) }
    }

    /// The descriptor, for the few callers (locks) that need it.
    var descriptor: Int32 { fd }
}
