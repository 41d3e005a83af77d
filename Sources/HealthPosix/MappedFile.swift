import Glibc

/// A whole file mapped read-only into memory (`mmap`, `MAP_SHARED`), unmapped when the object goes. Its pages are
/// the kernel's page cache: read on first touch, kept while memory allows, dropped first under pressure and read
/// again when touched. The file must not change while it is mapped. Thread-safe (read-only).
public final class MappedFile: @unchecked Sendable {
    /// The mapped bytes.
    public let bytes: UnsafeRawBufferPointer
    /// The file's path, as given.
    public let path: String
    /// Called once the mapping is gone (removes the file, say).
    private let onUnmap: @Sendable (String) -> Void

    /// Maps the file at `path`, which must not be empty; `onUnmap` runs with the path after the unmap in deinit.
    public init(path: String, onUnmap: @escaping @Sendable (String) -> Void = { _ in }) throws(SystemError) {
        let file = try File(path: path)
        defer { file.close() }
        let size = Int(try file.size())
        guard size > 0 else { throw SystemError(code: EINVAL, call: "mmap(\(path))", message: "the file is empty") }
        guard let base = mmap(nil, size, PROT_READ, MAP_SHARED, file.descriptor, 0), base != MAP_FAILED else {
            throw SystemError(errno: errno, call: "mmap(\(path))")
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
        self.path = path
        self.onUnmap = onUnmap
    }

    /// Lets the process's page table go of every page read so far (`madvise(MADV_DONTNEED)`): they stay in the
    /// page cache and come back, without a disk read while the kernel keeps them, on the next touch. For a file
    /// read once through its mapping (checked, decoded) whose pages are only touched again when queried.
    public func releaseResidentPages() {
        madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count, MADV_DONTNEED)
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
        onUnmap(path)
    }
}
