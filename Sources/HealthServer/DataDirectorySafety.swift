import HealthModel
import HealthPosix

/// Refuses a data directory that another local user could tamper with, as ssh's StrictModes does: the
/// directory, `wal/`, `snapshots/`, `identities.json` and `admin.token` must belong to hkd's effective user
/// (or root) and must not be writable by group or others. Whoever can replace `identities.json` becomes admin.
enum DataDirectorySafety {
    /// The paths checked, those that exist.
    static func sensitivePaths(in directory: String) -> [String] {
        [
            directory, directory + "/wal", directory + "/snapshots", directory + "/" + IdentityRegistry.fileName,
            directory + "/" + IdentityRegistry.adminTokenFileName,
        ]
    }

    /// Throws ``ErrorCode/storageUnavailable`` naming the first unsafe path and the `chown`/`chmod` that fixes it.
    static func check(_ directory: String) throws {
        let user = FileSystem.effectiveUserID
        for path in sensitivePaths(in: directory) {
            let status: FileSystem.Status?
            do {
                status = try FileSystem.status(of: path)
            } catch {
                throw HealthError(.storageUnavailable, "cannot check \(path): \(error.message)")
            }
            guard let status else { continue }
            if status.owner != user, status.owner != 0 {
                throw HealthError(
                    .storageUnavailable,
                    "\(path) belongs to user \(status.owner), not to hkd's user \(user): that user could replace "
                        + "hkd's data or identities. Check its content, then run chown \(user) \(path)")
            }
            if status.permissions & 0o022 != 0 {
                throw HealthError(
                    .storageUnavailable,
                    "\(path) is writable by group or others (mode \(String(status.permissions, radix: 8))): another "
                        + "user could replace hkd's data or identities. Check its content, then run chmod go-w \(path)")
            }
        }
    }
}
