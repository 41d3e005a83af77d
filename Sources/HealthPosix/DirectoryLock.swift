// An exclusive lock on a data directory, so two servers cannot share it.
import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` on a directory, held until `release()` or deinit. The lock is on a descriptor of the
/// directory itself, held open for the lock's lifetime, so deleting or replacing a file inside it cannot
/// release it; the kernel drops it when the process dies, so a crash never leaves a stale lock. The lock file
/// (`LOCK`) is created and locked too, for older servers that only look at it. Thread-safe.
public final class DirectoryLock: Sendable {
    /// The lock file's path.
    public let path: String
    private let directory: File
    private let file: File

    /// Takes the lock on `directory` and on `directory/name`, creating the file (0600) if needed. Throws
    /// EWOULDBLOCK when another process (or another open of the same directory) holds it.
    public init(directory: String, name: String = "LOCK") throws(SystemError) {
        path = directory + "/" + name
        self.directory = try File(path: directory, options: [])
        do throws(SystemError) {
            file = try File(path: path, options: [.create, .write], permissions: 0o600)
        } catch {
            self.directory.close()
            throw error
        }
        do throws(SystemError) {
            for (held, what) in [(self.directory, directory), (file, path)] {
                if try !Sys.flock(held.descriptor, operation: HK_LOCK_EX | HK_LOCK_NB) {
                    throw SystemError(
                        code: EWOULDBLOCK, call: "flock(\(what))", message: "the directory is locked by another server")
                }
            }
        } catch {
            release()
            throw error
        }
    }

    /// Releases the lock (closing the descriptors); idempotent.
    public func release() {
        file.close()
        directory.close()
    }
}
