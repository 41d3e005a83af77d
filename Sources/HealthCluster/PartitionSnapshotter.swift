import HealthEngine
import HealthModel
import HealthPosix
import Synchronization

/// When the partitions this node serves get a new snapshot in JetStream (``PartitionSnapshots``): once a
/// partition's stream holds ``streamBytes`` after its snapshot, once ``interval`` has passed since its last one
/// (or since this node took it) and it changed, and for every partition when the node drains, so that the
/// next owner loads the snapshot instead of replaying the stream.
final class PartitionSnapshotter: Sendable {
    let snapshots: PartitionSnapshots
    private let log: JetStreamChangeLog
    private let store: HealthStore
    private let leases: PartitionLeases
    /// Time between snapshots of a partition that changes; `nil`: only by size and when draining.
    private let interval: Duration?
    /// Stream bytes after a partition's snapshot that make it due.
    private let streamBytes: UInt64
    private let logLine: @Sendable (String) -> Void
    /// Per partition: when it last got a snapshot (or this node first saw it served), and the last stream
    /// sequence applied then.
    private let last = Mutex<[Int: (at: ContinuousClock.Instant, applied: UInt64)]>([:])
    private let passes = Mutex<PeriodicThread?>(nil)

    init(
        log: JetStreamChangeLog, store: HealthStore, leases: PartitionLeases, interval: Duration?,
        streamBytes: UInt64, logLine: @escaping @Sendable (String) -> Void
    ) {
        snapshots = PartitionSnapshots(jetStream: log.jetStream, layout: log.layout)
        self.log = log
        self.store = store
        self.leases = leases
        self.interval = interval
        self.streamBytes = streamBytes
        self.logLine = logLine
    }

    /// Starts checking every `every` (the interval when it is shorter).
    func start(every: Duration = .seconds(5)) throws {
        let period = min(every, interval ?? every)
        let thread = try PeriodicThread(name: "hkd-snapshots", every: period) { [self] in pass() }
        passes.withLock { $0 = thread }
    }

    /// Stops the checks (a snapshot being written finishes first).
    func stop() {
        let thread = passes.withLock { passes in
            defer { passes = nil }
            return passes
        }
        thread?.stop()
    }

    /// One check of every partition this node serves: snapshots those due.
    func pass() {
        let now = ContinuousClock.now
        for index in leases.held where log.serves(index) && leases.isCurrent(index) {
            let applied = log.lastApplied(index)
            let previous = last.withLock { last in
                if last[index] == nil { last[index] = (now, 0) }
                return last[index]!
            }
            guard applied > previous.applied else { continue }
            var due = interval.map { now - previous.at >= $0 } ?? false
            if !due {
                do {
                    due = try log.jetStream.streamState(log.layout.streamName(index)).bytes >= streamBytes
                } catch {
                    logLine("partition \(index): \(error)")
                }
            }
            if due { snapshot(index, reason: "due") }
        }
    }

    /// Snapshots every partition this node serves that changed since its last snapshot (draining). Stops at
    /// the first that fails (NATS unreachable: every other would wait as long), so a drain stays short.
    func snapshotAll() {
        for index in leases.held where log.serves(index) {
            let applied = log.lastApplied(index)
            guard applied > (last.withLock { $0[index]?.applied } ?? 0) else { continue }
            guard snapshot(index, reason: "draining") else { return }
        }
    }

    /// Writes a snapshot of partition `index` now; logs what it wrote or why it could not. Returns false when
    /// it could not.
    @discardableResult
    func snapshot(_ index: Int, reason: String) -> Bool {
        let started = ContinuousClock.now
        let applied = log.lastApplied(index)
        do {
            let written = try snapshots.write(index, store: store, log: log)
            last.withLock { $0[index] = (started, applied) }
            guard let head = written else { return true }
            let (seconds, attoseconds) = (ContinuousClock.now - started).components
            let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
            logLine(
                "snapshot of partition \(index) (\(reason)) at stream sequence \(head.sequence): \(head.dataBytes) "
                    + "bytes in \(head.dataMessages) messages, "
                    + String(format: "%.1f ms", milliseconds))
            return true
        } catch {
            logLine("snapshot of partition \(index) failed (its stream keeps everything): \(error)")
            return false
        }
    }
}
