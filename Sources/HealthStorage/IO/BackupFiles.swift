import HealthCodec
import HealthModel
import HealthPosix

/// Writes a backup's files into its directory (each atomically, fsynced), recording every file's size and
/// CRC-32 for the ``BackupManifest`` written last. Blocking file I/O.
struct BackupWriter {
    /// The backup directory.
    let directory: String
    /// The files written so far.
    private(set) var files: [BackupManifest.File] = []

    /// Creates the backup directory (its parent exists: ``BackupTarget``) with `snapshots/` and `wal/` in it.
    init(_ target: BackupTarget) throws {
        directory = target.path
        if !target.exists { try FileSystem.makeDirectories(directory, permissions: 0o700) }
        // Checked again now that it exists: a symbolic link put there since is not written through.
        if try FileSystem.isSymbolicLink(directory) {
            throw HealthError(.invalidArgument, "the backup directory \(directory) became a symbolic link")
        }
        for folder in ["snapshots", "wal"] {
            try FileSystem.makeDirectories(directory + "/" + folder, permissions: 0o700)
        }
    }

    /// Bytes written so far.
    var bytes: Int64 { files.reduce(0) { $0 + Int64($1.size) } }

    /// Copies the file at `source` (as far as it is written when the copy starts) to `name` in the backup.
    mutating func copy(_ source: String, as name: String) throws {
        var crc: UInt32 = 0
        let copied = try FileSystem.copyFile(source, to: directory + "/" + name) { crc = Zlib.crc32($0, initial: crc) }
        files.append(.init(path: name, size: UInt64(copied), crc32: crc))
    }

    /// Writes `bytes` as `name` in the backup.
    mutating func write(_ bytes: [UInt8], as name: String) throws {
        try FileSystem.writeFileAtomically(directory + "/" + name, bytes, permissions: 0o600)
        files.append(.init(path: name, size: UInt64(bytes.count), crc32: Zlib.crc32(bytes)))
    }

    /// Writes the ``BackupManifest`` (listing ``files``) as `backup.json`, last, once every directory entry is
    /// durable; returns its size.
    func finish(generation: UInt64, samples: Int, lastSequence: UInt64) throws -> Int {
        for folder in ["/snapshots", "/wal"] { try FileSystem.syncDirectory(directory + folder) }
        let manifest = BackupManifest(
            generation: generation, samples: UInt64(samples), lastSequence: lastSequence, files: files)
        let bytes = manifest.encode()
        try FileSystem.writeFileAtomically(directory + "/" + BackupManifest.fileName, bytes, permissions: 0o600)
        return bytes.count
    }
}

/// Checks a backup (or a data directory restored from one) against its ``BackupManifest``.
public enum BackupCheck {
    /// The manifest of the backup in `directory`, nil when it has none (a backup of a release before
    /// `backup.json`, or one that did not finish). Throws ``ErrorCode/storageUnavailable`` naming every file
    /// that is missing or differs from what the backup wrote, and for a manifest that cannot be read.
    public static func verify(_ directory: String) throws -> BackupManifest? {
        guard let (manifest, problems) = try run(directory) else { return nil }
        guard problems.isEmpty else { throw HealthError(.storageUnavailable, describe(problems, in: directory)) }
        return manifest
    }

    /// One line naming what differs from the manifest in `directory`.
    static func describe(_ problems: [String], in directory: String) -> String {
        "\(directory)/\(BackupManifest.fileName): the backup is damaged or incomplete: "
            + problems.joined(separator: "; ")
    }

    /// The manifest in `directory` (nil when there is none) and what differs from it: one line per file that is
    /// missing, of another size or another CRC-32. Throws ``ErrorCode/storageUnavailable`` for a manifest that
    /// cannot be read.
    static func run(_ directory: String) throws -> (manifest: BackupManifest, problems: [String])? {
        let path = directory + "/" + BackupManifest.fileName
        guard try FileSystem.exists(path) else { return nil }
        let manifest: BackupManifest
        do {
            manifest = try BackupManifest.decode(try FileSystem.readFile(path, maxBytes: 16 << 20))
        } catch let error as CodecError {
            throw HealthError(.storageUnavailable, "\(path): \(error.message)")
        } catch {
            throw HealthError(.storageUnavailable, "\(path): cannot be read (\(error))")
        }
        var problems: [String] = []
        for file in manifest.files {
            let filePath = directory + "/" + file.path
            guard try FileSystem.exists(filePath) else {
                problems.append("\(file.path) is missing")
                continue
            }
            let (size, crc) = try sizeAndCRC(of: filePath)
            if size != file.size {
                problems.append("\(file.path) has \(size) bytes where the backup wrote \(file.size)")
            } else if crc != file.crc32 {
                problems.append("\(file.path) does not match its checksum (its bytes changed)")
            }
        }
        return (manifest, problems)
    }

    /// The size and CRC-32 of the file at `path`, read in 1 MiB pieces.
    private static func sizeAndCRC(of path: String) throws -> (UInt64, UInt32) {
        let file = try File(path: path)
        defer { file.close() }
        var crc: UInt32 = 0
        var offset: Int64 = 0
        while true {
            let chunk = try file.read(count: 1 << 20, at: offset)
            if chunk.isEmpty { break }
            crc = Zlib.crc32(chunk, initial: crc)
            offset += Int64(chunk.count)
        }
        return (UInt64(offset), crc)
    }
}
