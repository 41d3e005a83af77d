import HealthModel
import HealthPosix

/// Where an ``IdentityRegistry`` keeps its table (the JSON of Protocol/STORAGE.md, *identities.json*): the data
/// directory's `identities.json` on a single node, the cluster's settings bucket in cluster mode, where every
/// node reads and changes the same table.
///
/// Writes are checked against the version read, so two writers never overwrite each other's change unseen.
protocol IdentityStorage: Sendable {
    /// What to call it in messages: a path, or `bucket/key`.
    var name: String { get }
    /// Whether other processes change it too: then the registry reloads it now and then and when a token
    /// names an identity it does not know.
    var isShared: Bool { get }
    /// The stored table and its version; `nil` when none is stored yet. Throws ``ErrorCode/storageUnavailable``.
    func load() throws -> (bytes: [UInt8], version: UInt64)?
    /// Stores `bytes` if the stored version is still `version` (`nil`: none stored); returns the new version, or
    /// `nil` when another writer came between. Throws ``ErrorCode/storageUnavailable``.
    func store(_ bytes: [UInt8], replacing version: UInt64?) throws -> UInt64?
}

/// The data directory's `identities.json` (mode 0600, replaced atomically). Only this process writes it (the
/// directory is locked), so a write never meets another: versions count this process's writes.
struct IdentityFileStorage: IdentityStorage {
    let path: String
    var name: String { path }
    var isShared: Bool { false }

    func load() throws -> (bytes: [UInt8], version: UInt64)? {
        do {
            guard try FileSystem.exists(path) else { return nil }
            return (try FileSystem.readFile(path, maxBytes: 64 << 20), 1)
        } catch {
            throw HealthError(.storageUnavailable, "cannot read \(path): \(error)")
        }
    }

    func store(_ bytes: [UInt8], replacing version: UInt64?) throws -> UInt64? {
        do {
            try FileSystem.writeFileAtomically(path, bytes, permissions: 0o600)
        } catch {
            throw HealthError(.storageUnavailable, "cannot write \(path): \(error)")
        }
        return (version ?? 0) + 1
    }
}
