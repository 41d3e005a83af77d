import HealthModel
import HealthPosix

/// The file operations the write-ahead log needs from a segment, so tests can inject a full disk.
///
/// Threading: the log calls `append` and `truncate` under its lock, `syncData` from its commit thread while
/// appends continue (as `fdatasync` allows), and `close` once no other call is running.
public protocol LogFile: AnyObject, Sendable {
    /// Writes all of `bytes` at the end of the file.
    func append(_ bytes: [UInt8]) throws
    /// Makes every byte appended so far durable (fdatasync).
    func syncData() throws
    /// Cuts the file to `length` bytes (to drop a partly written record).
    func truncate(to length: Int64) throws
    /// Closes the file.
    func close()
}

/// Opens segment files; tests substitute one that fails.
public protocol LogFileOpener: Sendable {
    /// Creates `path` (which must not exist) for appending.
    func create(_ path: String) throws -> any LogFile
}

/// Segments as real files through HealthPosix.
public struct PosixLogFileOpener: LogFileOpener {
    /// The opener of real files.
    public init() {}

    /// Creates `path` with mode 0600, opened for appending.
    public func create(_ path: String) throws -> any LogFile {
        PosixLogFile(try File(path: path, options: [.create, .exclusive, .write, .append], permissions: 0o600))
    }
}

/// A segment file opened with O_APPEND.
final class PosixLogFile: LogFile {
    let file: File
    init(_ file: File) { self.file = file }
    func append(_ bytes: [UInt8]) throws { try file.write(bytes) }
    func syncData() throws { try file.syncData() }
    func truncate(to length: Int64) throws { try file.truncate(to: length) }
    func close() { file.close() }
}

/// Storage errors as the retryable ``ErrorCode/storageUnavailable``.
func storageError(_ what: String, _ error: any Error) -> HealthError {
    if let error = error as? HealthError { return error }
    let detail = (error as? SystemError).map(\.description) ?? "\(error)"
    return HealthError(.storageUnavailable, "\(what): \(detail)")
}
