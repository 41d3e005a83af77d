import HealthEngine
import HealthModel
import HealthStorage
import HealthPosix

/// The change log of cluster mode: each record goes to its subject's partition stream, framed exactly as in a
/// local log segment (`length | crc | kind | sequence | payload`, the sequence being the stream sequence it is
/// stored at), published with `Nats-Expected-Last-Sequence` set to the last sequence this node applied, and
/// acknowledged only after JetStream's acknowledgement (stored on a quorum of the stream's replicas):
/// acknowledged = replicated.
///
/// `append` publishes and waits under the partition's own lock (inside the shard's write lock, as every log
/// append runs), so one partition's records are stored in the order they are applied; ``waitUntilDurable(_:)``
/// has nothing left to wait for. A node appends only to partitions it owns (``own(_:after:)``). When the stream
/// has moved on (another node appended: this one lost its lease, or a former owner appended late), JetStream
/// refuses the publish and nothing is stored or applied. When the acknowledgement does not come (a lost
/// connection, no quorum) the record may or may not be stored. Either way the partition is refused until
/// ``catchUp(_:into:)`` has loaded what the stream holds after the last sequence applied (the leases decide
/// whether the partition is still this node's).
///
/// **Acknowledged within the lease.** With a lease deadline (``init(jetStream:layout:leaseDeadline:refusal:)``)
/// a change is acknowledged only when JetStream's acknowledgement arrived before the instant until which this
/// node is sure its lease is its own. The next owner creates the lease after it expired and reads the stream's
/// end after that, so it finds every record a former owner acknowledged. A publish sent within the lease but
/// acknowledged after it (a slow quorum, a leader election) may be stored: it is reported as not done (the
/// retryable ``ErrorCode/storageUnavailable``; a retry of the batch is recognised once the record is applied)
/// and the partition catches up before it appends again. Without this bound a new owner could read the stream's
/// end before such a late record landed and then serve reads without it.
public final class JetStreamChangeLog: ChangeLog {
    /// One partition as this node sees it.
    struct Partition {
        /// The stream sequence of the last record applied in memory.
        var last: UInt64 = 0
        /// Whether this node may append.
        var owned = false
        /// A publish whose outcome is unknown: refuse appends until caught up.
        var uncertain = false
    }

    public let jetStream: JetStream
    public let layout: PartitionLayout
    private let partitions: [ConditionLock<Partition>]
    /// Says why a partition is refused: names its owner when another node has it (``ErrorCode/notOwner``).
    private let refusal: @Sendable (_ partition: Int, _ subject: String) -> HealthError
    /// The instant until which this node is sure it holds a partition's lease (`nil`: it is not); `nil` for a
    /// log without leases (tests), whose appends have no deadline.
    private let leaseDeadline: (@Sendable (_ partition: Int) -> ContinuousClock.Instant?)?

    /// A log over `jetStream`'s partition streams, owning none yet. `leaseDeadline` gives, per partition, the
    /// instant until which this node is sure its lease is its own (`nil`: not sure at all): a change is refused
    /// from then on, and one whose acknowledgement arrives later is not acknowledged. `refusal` makes the error for
    /// a change to a partition this node does not own.
    public init(
        jetStream: JetStream, layout: PartitionLayout,
        leaseDeadline: (@Sendable (_ partition: Int) -> ContinuousClock.Instant?)? = nil,
        refusal: @escaping @Sendable (_ partition: Int, _ subject: String) -> HealthError = { partition, subject in
            HealthError(.storageUnavailable, "partition \(partition) of subject \(subject) is not owned by this node")
        }
    ) {
        self.jetStream = jetStream
        self.layout = layout
        partitions = (0..<layout.count).map { _ in ConditionLock(Partition()) }
        self.refusal = refusal
        self.leaseDeadline = leaseDeadline
    }

    public func append(kind: LogRecordKind, payload: [UInt8], subject: String) throws -> UInt64 {
        let index = layout.partition(of: subject)
        return try partitions[index].withLock { p in
            guard p.owned else { throw refusal(index, subject) }
            guard !p.uncertain else {
                throw HealthError(
                    .storageUnavailable,
                    "partition \(index) is catching up with its stream after an unacknowledged write; retry")
            }
            let deadline = leaseDeadline.map { $0(index) }
            if let deadline, deadline.map({ ContinuousClock.now >= $0 }) ?? true {
                throw HealthError(
                    .storageUnavailable,
                    "the lease of partition \(index) (subject \(subject)) was not renewed in time; retry")
            }
            let record = LogFraming.record(kind: kind.rawValue, sequence: p.last + 1, payload: payload)
            do {
                // Waits no longer than the lease is certain: an isolated node fails at its deadline.
                let wait = (deadline ?? nil).map { min(jetStream.wait, $0 - ContinuousClock.now) }
                let stored = try jetStream.publish(
                    record, to: layout.streamSubject(index), expectedLast: p.last, wait: wait)
                guard stored == p.last + 1 else {
                    p.uncertain = true
                    throw HealthError(
                        .internalError, "partition \(index): JetStream stored record \(p.last + 1) at \(stored)")
                }
                if let deadline = deadline ?? nil, ContinuousClock.now >= deadline {
                    // Another node may have taken the partition and read its stream before this record landed:
                    // not acknowledged; catching up applies it here.
                    p.uncertain = true
                    throw HealthError(
                        .storageUnavailable,
                        "partition \(index): JetStream acknowledged record \(stored) only after this node's lease "
                            + "could have expired; it may be stored, retry")
                }
                p.last = stored
                return stored
            } catch let failure as NATSFailure {
                // Either way the stream may hold records this node has not applied: catch up before the next
                // append. A stream that moved on was appended to by another node: the lease says whose the
                // partition is (the next renewal disowns it here if it is no longer this node's).
                p.uncertain = true
                if failure.isWrongLastSequence {
                    throw HealthError(
                        .storageUnavailable,
                        "partition \(index): another node appended to its stream after sequence \(p.last); retry")
                }
                throw failure.healthError
            }
        }
    }

    /// Nothing to wait for: ``append(kind:payload:subject:)`` returned after JetStream's acknowledgement.
    public func waitUntilDurable(_ ticket: UInt64) throws {}

    /// 0: every append is acknowledged before it returns, so a no-op change duplicates only acknowledged ones.
    public var lastSequence: UInt64 { 0 }

    // MARK: Ownership

    /// This node owns partition `index`, whose records through stream sequence `last` are applied in memory.
    public func own(_ index: Int, after last: UInt64) {
        partitions[index].withLock { $0 = Partition(last: last, owned: true) }
    }

    /// This node took partition `index` over: it refuses changes until ``catchUp(_:into:)`` has applied what the
    /// stream holds after the last record this node applied (none, unless it owned the partition before).
    public func takeOver(_ index: Int) {
        partitions[index].withLock { p in
            p.owned = true
            p.uncertain = true
        }
    }

    /// This node no longer appends to partition `index`.
    public func disown(_ index: Int) {
        partitions[index].withLock { $0.owned = false }
    }

    /// Whether this node owns partition `index` (and may append to it once caught up).
    public func owns(_ index: Int) -> Bool { partitions[index].withLock { $0.owned } }

    /// Whether this node serves partition `index` now: it owns it and has applied its stream (not rebuilding,
    /// not catching up after an unacknowledged write).
    public func serves(_ index: Int) -> Bool { partitions[index].withLock { $0.owned && !$0.uncertain } }

    /// The stream sequence of the last record of partition `index` applied in memory.
    public func lastApplied(_ index: Int) -> UInt64 { partitions[index].withLock { $0.last } }

    /// Partitions whose last publish went unacknowledged (to catch up before they take changes again).
    public var uncertainPartitions: [Int] {
        (0..<layout.count).filter { i in partitions[i].withLock { $0.owned && $0.uncertain } }
    }

    /// What ``catchUp(_:into:)`` did.
    public struct CatchUp: Sendable {
        /// The snapshot loaded (when it covered more than the node had applied), and its samples.
        public var snapshot: PartitionSnapshotHead?
        public var snapshotSamples = 0
        /// Records read from the stream after the snapshot or the last record applied.
        public var replayed = 0
    }

    /// The kind of a confirmation record (Protocol/STORAGE.md, *Cluster mode*): appended, with an empty payload,
    /// by a node that caught up with a partition's stream before it serves it, published like any record with
    /// the stream's last sequence as it read it. JetStream stores it only if that sequence was the stream's end,
    /// so a node never serves a partition from an end a server not current gave it (a former leader not yet
    /// unseated after a network partition healed answers for the stream with what it had), and no record a
    /// former owner had stored is missing. Replaying skips it.
    public static let confirmationKind: UInt8 = 64

    /// Brings partition `index` in `store` up to its stream's end, then takes changes again: loads its newest
    /// snapshot (``PartitionSnapshots``) when that covers more than this node applied (replacing what the store
    /// holds of the partition), then replays the stream after it; with `confirm`, then appends a confirmation
    /// record (``confirmationKind``) after the end it read, and serves only once JetStream stored it there. Call
    /// it with no shard lock held (replaying takes them). Throws (the retryable ``ErrorCode/storageUnavailable``)
    /// leaving the partition refused, to be caught up again.
    @discardableResult
    public func catchUp(_ index: Int, into store: HealthStore, confirm: Bool = false) throws -> CatchUp {
        var report = CatchUp()
        var after = lastApplied(index)
        var applied: [String: UInt64] = [:]
        let snapshots = PartitionSnapshots(jetStream: jetStream, layout: layout)
        if let (_, head) = try snapshots.latest(index), head.sequence > after {
            // Until the stream after it is applied too, the store holds the snapshot and part of the stream: a
            // failure from here leaves nothing applied as far as the next try is concerned (it loads the
            // snapshot again, replacing the partition's subjects).
            partitions[index].withLock { $0.last = 0 }
            (applied, report.snapshotSamples) = try snapshots.load(head, into: store)
            report.snapshot = head
            after = head.sequence
        }
        let (last, replayed) = try PartitionReplay(jetStream: jetStream, layout: layout).run(
            index, after: after, skipping: applied, into: store)
        report.replayed = replayed
        let end = confirm ? try self.confirm(index, after: last) : last
        partitions[index].withLock { p in
            p.last = end
            p.uncertain = false
        }
        return report
    }

    /// Appends a confirmation record to partition `index`'s stream provided it ends at sequence `last`; returns
    /// the sequence it was stored at. Throws the retryable ``ErrorCode/storageUnavailable`` when the stream has
    /// moved on (read again), or when JetStream does not answer.
    private func confirm(_ index: Int, after last: UInt64) throws -> UInt64 {
        let record = LogFraming.record(kind: Self.confirmationKind, sequence: last + 1, payload: [])
        do {
            let stored = try jetStream.publish(record, to: layout.streamSubject(index), expectedLast: last)
            guard stored == last + 1 else {
                throw HealthError(
                    .internalError, "partition \(index): JetStream stored record \(last + 1) at \(stored)")
            }
            return stored
        } catch let failure as NATSFailure {
            if failure.isWrongLastSequence {
                throw HealthError(
                    .storageUnavailable,
                    "partition \(index): its stream holds records after sequence \(last), the end it was read to "
                        + "(a server not current answered, or a late write landed); retry")
            }
            throw failure.healthError
        }
    }
}
