import HealthEngine

/// Where a ``DurableStore`` logs its changes: the local ``WriteAheadLog`` (single-node mode, the default), or a
/// log kept elsewhere (cluster mode: a NATS JetStream stream per partition of the subjects, module
/// HealthCluster).
///
/// A change calls ``append(kind:payload:subject:)`` under its shard's write lock, after every check and before
/// the change is applied, so records of one shard are in apply order; a throw refuses the change and nothing is
/// applied. Once the lock is released the change calls ``waitUntilDurable(_:)`` with what `append` returned
/// (or, for a change that turned out a no-op, with ``lastSequence``: what it duplicates must be durable too) and
/// is acknowledged when that returns.
public protocol ChangeLog: Sendable {
    /// Appends one record (kind and payload as Protocol/STORAGE.md, "Log segment" describes them) about
    /// `subject`; returns the ticket to wait for.
    func append(kind: LogRecordKind, payload: [UInt8], subject: String) throws -> UInt64
    /// Returns once the record of `ticket` (and every one before it) is as durable as the log promises.
    func waitUntilDurable(_ ticket: UInt64) throws
    /// The ticket of the last record appended.
    var lastSequence: UInt64 { get }
}

extension WriteAheadLog: ChangeLog {
    /// ``append(kind:payload:)``: the local log keeps every subject in one sequence.
    public func append(kind: LogRecordKind, payload: [UInt8], subject: String) throws -> UInt64 {
        try append(kind: kind, payload: payload)
    }
}

/// Log records applied to a store outside start-up's recovery, the way recovery replays them: what a cluster
/// node does with the records of a partition it takes over.
public enum LogReplay {
    /// The one framed record (`length | crc | kind | sequence | payload`, Protocol/STORAGE.md) that `bytes`
    /// holds exactly; `nil` when they are anything else (short, a bad checksum, bytes after the record).
    public static func record(_ bytes: [UInt8]) -> LogFraming.Record? {
        guard let (record, end) = LogFraming.record(in: bytes, at: 0), end == bytes.count else { return nil }
        return record
    }

    /// Applies `record` to `store` unless a snapshot loaded holds it (`applied`: each store's type and the
    /// sequence its snapshot is complete up to); throws what applying it throws (a record that does not decode,
    /// a type that does not exist).
    public static func apply(
        _ record: LogFraming.Record, to store: HealthStore, skippingThrough applied: [String: UInt64] = [:]
    ) throws {
        var report = RecoveryReport()
        try Recovery.replay(record, store: store, applied: applied, report: &report)
    }
}
