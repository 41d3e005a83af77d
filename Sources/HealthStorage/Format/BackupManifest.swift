import Foundation
import HealthCodec

/// What a backup holds (`backup.json` in the backup directory, Protocol/STORAGE.md *Backups*): the snapshot
/// generation and its samples, the last log sequence the backup's log reaches, and every file with its size and
/// CRC-32, so that a restore can tell a whole backup from a damaged or incomplete one. Written last: a backup
/// without it did not finish (or is from a release before it). Pure, thread-safe.
public struct BackupManifest: Codable, Hashable, Sendable {
    /// One file of the backup.
    public struct File: Codable, Hashable, Sendable {
        /// The path relative to the backup directory (`snapshots/MANIFEST`, `wal/0000000000000007.log`, …).
        public var path: String
        public var size: UInt64
        /// CRC-32 (zlib's) of the whole file.
        public var crc32: UInt32

        /// A file entry from its parts.
        public init(path: String, size: UInt64, crc32: UInt32) {
            self.path = path
            self.size = size
            self.crc32 = crc32
        }
    }

    /// The file's name in the backup directory.
    public static let fileName = "backup.json"
    /// The format this version writes and reads.
    public static let currentFormat = 1

    public var format: Int
    /// The snapshot generation the backup starts from, and the samples in it.
    public var generation: UInt64
    public var samples: UInt64
    /// The last log record the backup holds (`wal/DURABLE` says the same).
    public var lastSequence: UInt64
    public var files: [File]

    /// A manifest from its parts.
    public init(generation: UInt64, samples: UInt64, lastSequence: UInt64, files: [File]) {
        format = Self.currentFormat
        self.generation = generation
        self.samples = samples
        self.lastSequence = lastSequence
        self.files = files
    }

    /// The manifest as JSON, keys sorted, one file per line.
    public func encode() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Encoding plain integers and strings cannot fail.
        return Array((try? encoder.encode(self)) ?? Data()) + [0x0A]
    }

    /// Decodes a manifest; throws ``CodecError`` when it is not one this version reads, or names a file outside
    /// the backup directory's `snapshots/`, `wal/` and top level.
    public static func decode(_ bytes: [UInt8]) throws -> BackupManifest {
        let manifest: BackupManifest
        do {
            manifest = try JSONDecoder().decode(BackupManifest.self, from: Data(bytes))
        } catch {
            throw CodecError(.malformedPayload, "not a backup manifest (\(error))")
        }
        guard manifest.format == currentFormat else {
            throw CodecError(.malformedPayload, "backup manifest format \(manifest.format), this version reads 1")
        }
        for file in manifest.files {
            let parts = file.path.split(separator: "/", omittingEmptySubsequences: false)
            let folderOK = parts.count == 1 || (parts.count == 2 && ["snapshots", "wal"].contains(parts[0]))
            guard folderOK, let name = parts.last, !name.isEmpty, name != ".", name != "..", !name.contains("\0")
            else { throw CodecError(.malformedPayload, "backup manifest names the file \(file.path.debugDescription)") }
        }
        return manifest
    }
}
