import Foundation
import HealthEngine
import HealthModel
import HealthPosix

/// Ownership of partitions by leases in the key-value bucket `HK_LEASES` (Protocol/STORAGE.md, "Cluster mode"):
/// key `p.<index>`, value `<node id> <host>:<port>` (ASCII, one space), entries expiring a TTL after their last
/// write. A node takes a free partition with a create (which succeeds only when the key has no value), renews
/// it with an update checked against the revision it wrote, and owns the partition as long as the renewals
/// succeed. A node that misses them (killed, stopped, cut off) loses the lease once the TTL is up; whoever
/// creates the key next catches up with the partition's stream and serves it. Its former owner, should it come
/// back, is fenced twice: its renewal finds another revision (it disowns the partition), and an append it
/// started meanwhile expects a stream sequence that has moved on (JetStream refuses it).
public final class PartitionLeases: Sendable {
    /// Who holds one partition's lease, as last read.
    public struct Holder: Sendable, Equatable {
        public var node: String
        /// The hkd address clients are sent to (`host:port`).
        public var address: String
    }

    /// This node's id and address.
    public let node: String
    public let address: String
    /// The lease TTL; renewals run every third of it.
    public let ttl: Duration
    private let bucket: KeyValueBucket
    private let log: JetStreamChangeLog
    private let store: HealthStore
    private let logLine: @Sendable (String) -> Void
    /// Per partition: the revision of this node's lease (when it holds one) and the holder last seen.
    private let state: ConditionLock<State>

    struct State {
        var revisions: [UInt64?]
        var holders: [Holder?]
        var stopping = false
        var thread: PosixThread?
    }

    /// The leases bucket's name.
    public static let bucketName = "HK_LEASES"

    /// Opens the leases bucket (created with `replicas` copies and `ttl` when it does not exist) for node `node`,
    /// reachable at `address`, owning partitions through `log` and rebuilding them into `store`. Nothing is
    /// taken until ``acquireFree()`` or ``start()``.
    public init(
        log: JetStreamChangeLog, store: HealthStore, node: String, address: String, ttl: Duration, replicas: Int,
        logLine: @escaping @Sendable (String) -> Void
    ) throws {
        do {
            bucket = try log.jetStream.keyValue(Self.bucketName, ttl: ttl, replicas: replicas)
        } catch {
            throw error.healthError
        }
        self.log = log
        self.store = store
        self.node = node
        self.address = address
        self.ttl = ttl
        self.logLine = logLine
        state = ConditionLock(
            State(
                revisions: Array(repeating: nil, count: log.layout.count),
                holders: Array(repeating: nil, count: log.layout.count)))
    }

    /// The value this node writes: `<node> <address>`.
    var value: [UInt8] { Array("\(node) \(address)".utf8) }

    /// Parses a lease value; `nil` for anything but `<node> <address>`.
    static func holder(_ value: [UInt8]) -> Holder? {
        let text = String(decoding: value, as: UTF8.self)
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        return Holder(node: String(parts[0]), address: String(parts[1]))
    }

    /// The holder of partition `index` as last seen (this node's own when it holds it).
    public func holder(of index: Int) -> Holder? { state.withLock { $0.holders[index] } }

    /// The partitions this node holds.
    public var held: [Int] { state.withLock { s in s.revisions.indices.filter { s.revisions[$0] != nil } } }

    /// One pass over every partition: renews the leases held (disowning a partition whose renewal is refused),
    /// takes the free ones, catching each up with its stream before it takes changes, and refreshes the other
    /// holders. Returns the partitions taken. Failures to reach NATS are logged and retried on the next pass.
    @discardableResult
    public func acquireFree() -> [Int] {
        var taken: [Int] = []
        for index in 0..<log.layout.count {
            let key = log.layout.leaseKey(index)
            do {
                if let revision = state.withLock({ $0.revisions[index] }) {
                    if let renewed = try bucket.update(key, value, last: revision) {
                        state.withLock { $0.revisions[index] = renewed }
                    } else {
                        log.disown(index)
                        state.withLock { $0.revisions[index] = nil }
                        logLine("lost the lease of partition \(index): another node holds it")
                    }
                }
                if state.withLock({ $0.revisions[index] }) == nil, let retaken = try takeIfFree(index, key: key) {
                    taken.append(retaken)
                }
                if log.uncertainPartitions.contains(index) { try log.catchUp(index, into: store) }
            } catch {
                logLine("partition \(index): \(error)")
            }
        }
        return taken
    }

    /// Takes partition `index` if its lease is free; returns it when taken. Records the holder seen otherwise.
    private func takeIfFree(_ index: Int, key: String) throws -> Int? {
        if let entry = try bucket.get(key) {
            let holder = Self.holder(entry.value)
            state.withLock { $0.holders[index] = holder }
            return nil
        }
        guard let revision = try bucket.create(key, value) else { return nil }
        let started = ContinuousClock.now
        log.takeOver(index)
        state.withLock { s in
            s.revisions[index] = revision
            s.holders[index] = Holder(node: node, address: address)
        }
        let replayed = try log.catchUp(index, into: store)
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        logLine(
            "took partition \(index): replayed \(replayed) records to stream sequence \(log.lastApplied(index)) in "
                + String(format: "%.1f ms", milliseconds))
        return index
    }

    /// Starts the thread that renews and takes leases every third of the TTL.
    public func start() throws {
        let thread = try PosixThread.spawn(name: "hkd-leases") { [self] in
            while true {
                let stopping = state.wait(until: .after(ttl / 3)) { $0.stopping ? true : nil } ?? false
                if stopping { return }
                acquireFree()
            }
        }
        state.withLock { $0.thread = thread }
    }

    /// Stops renewing and gives the leases up (deleted, so another node may take them at once).
    public func stop() {
        let thread = state.update { s in
            s.stopping = true
            defer { s.thread = nil }
            return s.thread
        }
        thread?.join()
        for index in held {
            log.disown(index)
            try? bucket.delete(log.layout.leaseKey(index))
        }
        state.withLock { s in s.revisions = s.revisions.map { _ in nil } }
    }
}
