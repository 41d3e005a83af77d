import HealthCodec
import HealthModel

/// Asks the server for a consistent online backup into `directory`, a path on the server's host that does not
/// exist yet (or is empty). Admins only. Answered by ``BackupResult`` once the backup is durable.
public struct BackupRequest: WireMessage {
    public static let kind = MessageKind.backupRequest
    public var directory: String
    public init(directory: String) { self.directory = directory }
    public func encode(into w: inout ByteWriter) { w.writeString(directory) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws { directory = try r.readString(limits) }
}

/// What a backup holds: the snapshot generation it starts from, the log records after it, and its size.
public struct BackupResult: WireMessage {
    public static let kind = MessageKind.backupResult
    /// The snapshot generation taken for the backup.
    public var generation: UInt64
    /// Samples in that snapshot.
    public var samples: UInt64
    /// Files written (snapshots, manifest, log segments, identities).
    public var files: UInt64
    /// Bytes written.
    public var bytes: UInt64

    public init(generation: UInt64, samples: UInt64, files: UInt64, bytes: UInt64) {
        self.generation = generation
        self.samples = samples
        self.files = files
        self.bytes = bytes
    }

    public func encode(into w: inout ByteWriter) {
        w.writeVarint(generation)
        w.writeVarint(samples)
        w.writeVarint(files)
        w.writeVarint(bytes)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        generation = try r.readVarint()
        samples = try r.readVarint()
        files = try r.readVarint()
        bytes = try r.readVarint()
    }
}
