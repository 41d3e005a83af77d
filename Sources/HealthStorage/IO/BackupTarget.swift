import HealthModel
import HealthPosix

/// The directory a backup is written into (``DurableStore/backup(to:including:)``), checked before anything is
/// created or written: an absolute path with no NUL byte and no `.` or `..` component; its parent an existing
/// directory (symbolic links on the way are resolved once, here: systemd's `StateDirectory` of a `DynamicUser`
/// service is one, and the backup is written to the real path); the directory itself absent, or an empty
/// directory that is not a symbolic link; and, resolved, outside the data directory. Every refusal is
/// ``ErrorCode/invalidArgument``: asking again for the same path cannot succeed.
struct BackupTarget: Sendable {
    /// The checked path with its parent resolved, without repeated or trailing slashes.
    let path: String
    /// Whether the directory exists already (then it is empty).
    let exists: Bool

    /// Checks `requested` against the rules above; `dataDirectory` is the store's own.
    init(_ requested: String, dataDirectory: String) throws(HealthError) {
        func refuse(_ why: String) -> HealthError {
            HealthError(.invalidArgument, "the backup directory \(requested.debugDescription) \(why)")
        }
        guard !requested.utf8.contains(0) else { throw refuse("contains a NUL byte") }
        guard requested.hasPrefix("/") else { throw refuse("must be an absolute path on the server's host") }
        let components = requested.split(separator: "/")
        guard let name = components.last else { throw refuse("is the root directory") }
        guard !components.contains(where: { $0 == "." || $0 == ".." }) else {
            throw refuse("contains a '.' or '..' component: name the directory itself")
        }
        let parent = "/" + components.dropLast().joined(separator: "/")
        do {
            guard try FileSystem.isDirectory(parent) else {
                throw refuse("is in \(parent), which is not an existing directory (create it first)")
            }
            let resolvedParent = try FileSystem.resolvedPath(parent)
            path = (resolvedParent == "/" ? "" : resolvedParent) + "/" + name
            if try FileSystem.isSymbolicLink(path) { throw refuse("is a symbolic link: name the real directory") }
            exists = try FileSystem.exists(path)
            if exists {
                guard try FileSystem.isDirectory(path) else { throw refuse("exists and is not a directory") }
                guard try FileSystem.contentsOfDirectory(path).isEmpty else { throw refuse("exists and is not empty") }
            }
            let data = try FileSystem.resolvedPath(dataDirectory)
            if path == data || path.hasPrefix(data == "/" ? "/" : data + "/") {
                throw refuse("is inside hkd's data directory \(data): a backup must live apart from what it backs up")
            }
        } catch let error as HealthError {
            throw error
        } catch {
            throw refuse("cannot be checked: \(error)")
        }
    }
}
