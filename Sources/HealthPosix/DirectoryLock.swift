// An exclusive lock on a data directory, so two servers cannot share it.
import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` on a lock file inside a directory, held until `release()` or deinit. The kernel
/// drops it when the process dies, so a crash never leaves a stale lock. Thread-safe.
public final class DirectoryLock: Sendable {
    /// The lock file's path.
    public let path: String
    private let file: File

    /// Takes the lock on `directory/name`, creating the file (0600) if needed. Throws EWOULDBLOCK when another
    /// process (or another open of the same file) holds it.
    public init(directory: String, name: String = "LOCK") throws(SystemError) {
        path = directory + "/" + name
        file = try File(path: path, options: [.create, .write], permissions: 0o600)
        do throws(SystemError) {
            if try !Sys.flock(file.descriptor, operation: HK_LOCK_EX | HK_LOCK_NB) {
                throw SystemError(
                    code: EWOULDBLOCK, call: "flock(\(path))", message: "the directory is locked by another server")
            }
        } catch {
            file.close()
            throw error
        }
    }

    /// Releases the lock (closing the file); idempotent.
    public func release() { file.close() }
}
