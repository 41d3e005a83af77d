// Path operations: directories, renames, permissions, atomic whole-file replacement.
#if canImport(Glibc)
    import Glibc
#endif

/// File-system operations on paths. Every function is thread-safe and blocking: keep them off event loops.
public enum FileSystem {
    /// Whether something exists at `path` (a dangling symbolic link counts).
    public static func exists(_ path: String) throws(SystemError) -> Bool {
        try Sys.statPath(path, followLinks: false) != nil
    }

    /// Whether `path` is a directory (following symbolic links).
    public static func isDirectory(_ path: String) throws(SystemError) -> Bool {
        guard let info = try Sys.statPath(path) else { return false }
        return info.st_mode & S_IFMT == S_IFDIR
    }

    /// Whether `path` itself is a symbolic link (not followed).
    public static func isSymbolicLink(_ path: String) throws(SystemError) -> Bool {
        guard let info = try Sys.statPath(path, followLinks: false) else { return false }
        return info.st_mode & S_IFMT == S_IFLNK
    }

    /// `path` with every symbolic link, `.` and `..` resolved (realpath(3)); it must exist.
    public static func resolvedPath(_ path: String) throws(SystemError) -> String { try Sys.realPath(path) }

    /// The size of the file at `path`.
    public static func size(of path: String) throws(SystemError) -> Int64 {
        guard let info = try Sys.statPath(path) else { throw SystemError(errno: ENOENT, call: "stat(\(path))") }
        return Int64(info.st_size)
    }

    /// The permission bits of `path` (such as 0o600).
    public static func permissions(of path: String) throws(SystemError) -> UInt32 {
        guard let info = try Sys.statPath(path) else { throw SystemError(errno: ENOENT, call: "stat(\(path))") }
        return UInt32(info.st_mode) & 0o7777
    }

    /// Who owns `path` and who may change it, from stat(2) (following symbolic links).
    public struct Status: Sendable, Equatable {
        /// The permission bits (such as 0o700).
        public var permissions: UInt32
        /// The owner's user id.
        public var owner: UInt32
        /// Whether it is a directory.
        public var isDirectory: Bool
    }

    /// The status of `path`, `nil` when nothing is there.
    public static func status(of path: String) throws(SystemError) -> Status? {
        guard let info = try Sys.statPath(path) else { return nil }
        return Status(
            permissions: UInt32(info.st_mode) & 0o7777, owner: UInt32(info.st_uid),
            isDirectory: info.st_mode & S_IFMT == S_IFDIR)
    }

    /// The effective user id of this process (geteuid).
    public static var effectiveUserID: UInt32 { Sys.effectiveUserID() }

    /// Sets the permission bits of `path`.
    public static func setPermissions(_ permissions: UInt32, of path: String) throws(SystemError) {
        try Sys.chmod(path, mode: permissions)
    }

    /// Renames `source` to `destination`, atomically replacing it. Call `syncDirectory` to make it durable.
    public static func rename(_ source: String, to destination: String) throws(SystemError) {
        try Sys.rename(source, destination)
    }

    /// Removes the file at `path`.
    public static func remove(_ path: String) throws(SystemError) { try Sys.unlink(path) }

    /// Removes `path` and, for a directory, everything inside it (symbolic links are removed, not followed).
    /// Nothing happens when `path` does not exist.
    public static func removeTree(_ path: String) throws(SystemError) {
        guard let info = try Sys.statPath(path, followLinks: false) else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            for name in try Sys.listDirectory(path) { try removeTree(path + "/" + name) }
            try Sys.rmdir(path)
        } else {
            try Sys.unlink(path)
        }
    }

    /// Creates `path` and any missing parents (`mkdir -p`); existing directories are fine.
    public static func makeDirectories(_ path: String, permissions: UInt32 = 0o755) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            let created = try Sys.mkdir(prefix, mode: permissions)
            if !created, try !isDirectory(prefix) { throw SystemError(errno: ENOTDIR, call: "mkdir(\(prefix))") }
            prefix += "/"
        }
    }

    /// The names in directory `path` (no `.` or `..`), sorted.
    public static func contentsOfDirectory(_ path: String) throws(SystemError) -> [String] {
        try Sys.listDirectory(path).sorted()
    }

    /// fsyncs directory `path`, making renames, creations and removals in it durable.
    public static func syncDirectory(_ path: String) throws(SystemError) {
        let directory = try File(path: path, options: [])
        defer { directory.close() }
        try directory.sync()
    }

    /// Reads the whole file at `path`; throws EFBIG when it is larger than `maxBytes`.
    public static func readFile(_ path: String, maxBytes: Int = .max) throws(SystemError) -> [UInt8] {
        let file = try File(path: path)
        defer { file.close() }
        return try file.readAll(maxBytes: maxBytes)
    }

    /// Replaces `path` with `bytes` so that a crash leaves either the old or the new content: writes a
    /// temporary sibling with `permissions`, fsyncs it, renames it over `path`, and fsyncs the directory.
    public static func writeFileAtomically(_ path: String, _ bytes: [UInt8], permissions: UInt32 = 0o644) throws {
        try writeFileAtomically(path, permissions: permissions) { file in try file.write(bytes) }
    }

    /// As ``writeFileAtomically(_:_:permissions:)``, with the contents written by `fill` into the open temporary
    /// file (so a large file need not be built in memory first). A throw from `fill` leaves `path` untouched.
    public static func writeFileAtomically(
        _ path: String, permissions: UInt32 = 0o644, writing fill: (File) throws -> Void
    ) throws {
        let temporary = temporaryPath(for: path)
        do {
            let file = try File(path: temporary, options: [.create, .truncate, .write], permissions: permissions)
            defer { file.close() }
            try fill(file)
            try Sys.chmod(temporary, mode: permissions)
            try file.sync()
        } catch {
            try? Sys.unlink(temporary)
            throw error
        }
        try rename(temporary, to: path)
        try syncDirectory(directory(of: path))
    }

    /// Copies the file at `source` to `destination` (atomically, fsynced), at most `limit` bytes of it (a file
    /// still being appended to is copied up to its size when the copy starts). `observe` sees each piece copied,
    /// in order. Returns the bytes copied.
    @discardableResult
    public static func copyFile(
        _ source: String, to destination: String, permissions: UInt32 = 0o600, limit: Int64 = .max,
        observing observe: ([UInt8]) -> Void = { _ in }
    ) throws -> Int64 {
        let input = try File(path: source)
        defer { input.close() }
        let length = min(try input.size(), limit)
        try writeFileAtomically(destination, permissions: permissions) { output in
            var offset: Int64 = 0
            while offset < length {
                let chunk = try input.read(count: Int(min(1 << 20, length - offset)), at: offset)
                if chunk.isEmpty { break }
                try output.write(chunk)
                observe(chunk)
                offset += Int64(chunk.count)
            }
        }
        return length
    }

    /// The temporary sibling ``writeFileAtomically(_:permissions:writing:)`` writes before its rename:
    /// `path.tmp-PID`.
    static func temporaryPath(for path: String) -> String { path + ".tmp-\(getpid())" }

    /// Removes the temporaries ``writeFileAtomically(_:permissions:writing:)`` leaves in `directory` when a
    /// process dies before its rename (`*.tmp-PID`), and returns their names. Call it only while holding the
    /// directory's lock, so that no other process is writing one.
    public static func removeAtomicWriteLeftovers(in directory: String) throws(SystemError) -> [String] {
        var removed: [String] = []
        for name in try contentsOfDirectory(directory) {
            let digits = name.reversed().prefix { ("0"..."9").contains($0) }.count
            guard digits > 0, name.dropLast(digits).hasSuffix(".tmp-") else { continue }
            try remove(directory + "/" + name)
            removed.append(name)
        }
        return removed
    }

    /// Creates a fresh, empty directory under the system temporary directory and returns its path.
    public static func makeTemporaryDirectory(prefix: String = "hk") throws(SystemError) -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        return try Sys.makeTemporaryDirectory(template: "\(base)/\(prefix)-XXXXXX")
    }

    /// The directory part of `path` (`.` when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
