import HealthCodec
import HealthModel
import HealthPosix

/// The durable mark's file, `wal/DURABLE` (see ``DurableMark``). The log creates it durably when it opens, then
/// rewrites it in place after every fsync, without an fsync of its own: it may lag behind after a power loss,
/// never run ahead, so it is a lower bound on what was acknowledged. Start-up drops a torn log end only when the
/// mark is there (``LogRecovery``).
enum DurableMarkFile {
    /// The file's name in the log directory.
    static let name = "DURABLE"

    /// Opens (creating) the mark in `directory` and records `sequence` in it durably (the file and its directory
    /// entry fsynced), so that a power loss cannot leave a log without its mark; `nil` when that fails (a full
    /// disk), and the log runs without until it tries again.
    static func open(_ directory: String, recording sequence: UInt64) -> File? {
        guard let file = try? File(path: directory + "/" + name, options: [.create, .write], permissions: 0o600)
        else { return nil }
        do {
            try file.write(DurableMark.encode(sequence), at: 0)
            try file.syncData()
            try FileSystem.syncDirectory(directory)
            return file
        } catch {
            file.close()
            return nil
        }
    }

    /// Records that everything through `sequence` is durable (best effort: a failure only weakens the check).
    static func write(_ sequence: UInt64, to file: File?) {
        try? file?.write(DurableMark.encode(sequence), at: 0)
    }

    /// The mark in `directory`, `nil` when there is none; throws ``ErrorCode/storageUnavailable`` naming the file
    /// when it is damaged.
    static func read(_ directory: String) throws -> UInt64? {
        let path = directory + "/" + name
        guard try FileSystem.exists(path) else { return nil }
        do {
            return try DurableMark.decode(try FileSystem.readFile(path, maxBytes: 4096))
        } catch let error as CodecError {
            throw HealthError(.storageUnavailable, "\(path): \(error.message)")
        }
    }
}
