import HealthWire

extension HealthClient {
    /// Asks the server for a consistent online backup into `directory`, an absolute path on the server's host that
    /// does not exist yet (or is empty), whose parent exists, reached without symbolic links and outside the
    /// server's data directory (else ``ErrorCode/invalidArgument``, not retried); returns once the backup is
    /// durable. Admins only. The backup is a data directory: `hkd --restore-from DIRECTORY --data-dir NEW` checks
    /// and starts from it. Retried like any request.
    public func backup(to directory: String) async throws(HealthClientError) -> BackupResult {
        try await send(BackupRequest(directory: directory))
    }
}
