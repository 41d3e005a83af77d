import Foundation
import HealthEngine
import HealthModel
import HealthPosix
import Synchronization

/// Ownership of partitions by leases in the key-value bucket `HK_LEASES` (Protocol/STORAGE.md, "Cluster mode"):
/// key `p.<index>`, value `<node id> <host>:<port>` (ASCII, one space), entries expiring a TTL after their last
/// write. A node takes a free partition with a create (which succeeds only when the key has no value), renews
/// it with an update checked against the revision it wrote, and owns the partition as long as the renewals
/// succeed. A node that misses them (killed, stopped, cut off) loses the lease once the TTL is up; whoever
/// creates the key next catches up with the partition's stream and serves it. Its former owner, should it come
/// back, is fenced twice: its renewal finds another revision (it disowns the partition), and an append it
/// started meanwhile expects a stream sequence that has moved on (JetStream refuses it).
///
/// **Rebalancing.** Every node announces itself in the same bucket on every pass, before it renews its leases:
/// key `n.<node id>` (a standby node: `s.<node id>`), value its address, expiring like a lease. The live nodes
/// are the announced ones; the *active* nodes are the live nodes that are not standby (all live nodes when
/// every one is standby). Sorted by id, active node `k` of `N` has the fair share `P / N`, plus one when
/// `k < P mod N`; every other node has 0. A node takes a free partition at once while it holds fewer than its
/// share, and any free partition that stayed free for a whole TTL (so that nothing stays unserved when the views
/// differ). A node holding more than its share hands the surplus over, as many as the other active nodes lack:
/// it stops serving each (no append is in flight once it is disowned), then deletes its lease, and the node
/// short of its share takes it on its next pass and rebuilds it from the stream.
///
/// A node serving the HTTP API announces its address too, beside its registry key: key `h.<node id>`, value
/// `<host>:<port>`, written and expiring with it, so that a node can send an HTTP client to another's
/// (``httpAddress(of:)``).
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
    /// Where this node serves the HTTP API (`host:port`); `nil` when it does not.
    public let httpAddress: String?
    /// Whether this node is a standby: it takes no share while an active node lives.
    public let standby: Bool
    /// The lease TTL; renewals run every third of it.
    public let ttl: Duration
    private let bucket: KeyValueBucket
    private let log: JetStreamChangeLog
    private let store: HealthStore
    private let logLine: @Sendable (String) -> Void
    /// Per partition: the revision of this node's lease (when it holds one) and the holder last seen.
    private let state: ConditionLock<State>
    /// Held while leases are renewed: by the renewal thread or a pass, one at a time.
    private let renewing = Mutex<Void>(())
    /// Held while partitions are rebuilt or caught up: by a pass or the catch-up thread, one at a time.
    private let catchingUp = Mutex<Void>(())
    /// Called with each partition this node stops serving (handed over, released, or its lease lost).
    private let leaving = Mutex<(@Sendable (Int) -> Void)?>(nil)

    /// Calls `body` with each partition this node stops serving from now on (on the lease thread, or the thread
    /// that stops the node), after it stopped appending to it.
    public func onLeaving(_ body: @escaping @Sendable (Int) -> Void) { leaving.withLock { $0 = body } }

    struct State {
        var revisions: [UInt64?]
        var holders: [Holder?]
        /// When each partition was first seen free (nil: held when last seen).
        var freeSince: [ContinuousClock.Instant?]
        /// For each lease held: when the write that created or last renewed it was sent (its expiry, counted by
        /// the server from when it stored the write, is at least a TTL after this instant).
        var writtenAt: [ContinuousClock.Instant?]
        /// The active nodes as last listed, sorted.
        var active: [String] = []
        /// Partitions whose lease this node created and has not rebuilt yet (logged `took partition` once
        /// rebuilt, whichever pass does it).
        var taking: Set<Int> = []
        /// Partitions whose lease this node holds but could not renew in time (logged once each way).
        var lapsed: Set<Int> = []
        /// Set by ``stop()``: renewals stop retrying.
        var stopping = false
        /// When a request to the bucket last failed to reach NATS (nil: never): for a while after it, what the
        /// bucket says is not trusted to show every live node (``settling``).
        var unreachable: ContinuousClock.Instant?
        /// When this node's registry key was last written.
        var announced: ContinuousClock.Instant?
        /// Runs the passes while the node serves.
        var passes: PeriodicThread?
        /// Renews the leases held while the node serves, apart from the passes, whose other steps can each wait
        /// out a request timeout.
        var renewals: PeriodicThread?
        /// Catches up the partitions whose last publish failed, apart from the passes.
        var catchUps: PeriodicThread?
    }

    /// The leases bucket's name.
    public static let bucketName = "HK_LEASES"

    /// Opens the leases bucket (created with `replicas` copies and `ttl` when it does not exist, raised like
    /// every bucket: ``ClusterSetup/bucket(_:_:ttl:replicas:log:)``) for node `node`, reachable at `address`,
    /// owning partitions through `log` and rebuilding them into `store`. Nothing is taken until ``pass()`` or
    /// ``start()``. A node serving the HTTP API at `httpAddress` announces it too.
    public init(
        log: JetStreamChangeLog, store: HealthStore, node: String, address: String, httpAddress: String? = nil,
        ttl: Duration, replicas: ClusterReplicas, standby: Bool = false,
        logLine: @escaping @Sendable (String) -> Void
    ) throws(NATSFailure) {
        bucket = try ClusterSetup.bucket(log.jetStream, Self.bucketName, ttl: ttl, replicas: replicas, log: logLine)
        self.log = log
        self.store = store
        self.node = node
        self.address = address
        self.httpAddress = httpAddress
        self.standby = standby
        self.ttl = ttl
        self.logLine = logLine
        state = ConditionLock(
            State(
                revisions: Array(repeating: nil, count: log.layout.count),
                holders: Array(repeating: nil, count: log.layout.count),
                freeSince: Array(repeating: nil, count: log.layout.count),
                writtenAt: Array(repeating: nil, count: log.layout.count)))
    }

    /// The value this node writes: `<node> <address>`.
    var value: [UInt8] { Array("\(node) \(address)".utf8) }

    /// This node's key in the registry of live nodes: `n.<node>`, or `s.<node>` for a standby.
    var registryKey: String { (standby ? Self.standbyPrefix : Self.activePrefix) + node }

    /// The prefixes of the registry keys of active and standby nodes.
    static let activePrefix = "n."
    static let standbyPrefix = "s."
    /// The prefix of the keys announcing nodes' HTTP API addresses.
    static let httpPrefix = "h."

    /// The HTTP API address node `node` announced (`host:port`); `nil` when it announced none (it serves no HTTP
    /// API, or left), or when NATS does not answer.
    public func httpAddress(of node: String) -> String? {
        guard let entry = try? bucket.get(Self.httpPrefix + node), !entry.value.isEmpty else { return nil }
        return String(decoding: entry.value, as: UTF8.self)
    }

    /// Writes this node's HTTP API address, when it serves one.
    private func announceHTTP() throws(NATSFailure) {
        guard let httpAddress else { return }
        try bucket.put(Self.httpPrefix + node, Array(httpAddress.utf8))
    }

    /// Parses a lease value; `nil` for anything but `<node> <address>`.
    static func holder(_ value: [UInt8]) -> Holder? {
        let text = String(decoding: value, as: UTF8.self)
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        return Holder(node: String(parts[0]), address: String(parts[1]))
    }

    /// The active nodes among the registry's `keys` (every key of the bucket), sorted by id: the nodes announced
    /// as active, or, when there is none, the standby nodes.
    static func activeNodes(_ keys: [String]) -> [String] {
        let active = keys.filter { $0.hasPrefix(activePrefix) }.map { String($0.dropFirst(activePrefix.count)) }
        if !active.isEmpty { return Set(active).sorted() }
        return Set(keys.filter { $0.hasPrefix(standbyPrefix) }.map { String($0.dropFirst(standbyPrefix.count)) })
            .sorted()
    }

    /// The fair share of `node` among the sorted `active` nodes for `partitions` partitions: `P / N`, plus one
    /// for the first `P mod N` nodes by id; 0 for a node that is not active.
    public static func fairShare(of node: String, among active: [String], partitions: Int) -> Int {
        guard let position = active.firstIndex(of: node) else { return 0 }
        return partitions / active.count + (position < partitions % active.count ? 1 : 0)
    }

    /// The holder of partition `index` as last seen (this node's own when it holds it).
    public func holder(of index: Int) -> Holder? { state.withLock { $0.holders[index] } }

    /// Whether this node's lease of partition `index` is certainly still its own: it holds it, and the write
    /// that created or last renewed it was sent less than 90 % of the TTL ago. A node that missed its renewals
    /// (paused, cut off from NATS, its lease thread late) stops serving before its lease can expire, so it does
    /// not answer from a partition another node may have taken; the 10 % allow for clocks running at different
    /// rates.
    public func isCurrent(_ index: Int) -> Bool { currentUntil(index).map { ContinuousClock.now < $0 } ?? false }

    /// The instant until which this node's lease of partition `index` is certainly its own (``isCurrent(_:)``):
    /// 90 % of the TTL after the write that created or last renewed it was sent; `nil` when it holds no lease.
    public func currentUntil(_ index: Int) -> ContinuousClock.Instant? {
        state.withLock { $0.writtenAt[index] }.map { $0 + ttl * 0.9 }
    }

    /// The other nodes holding partitions, as last seen, by id: where a client may go while this node cannot
    /// serve.
    public var otherHolders: [Holder] {
        let holders = state.withLock { $0.holders }
        var seen: [String: Holder] = [:]
        for case let holder? in holders where holder.node != node { seen[holder.node] = holder }
        return seen.values.sorted { $0.node < $1.node }
    }

    /// The partitions this node holds.
    public var held: [Int] { state.withLock { s in s.revisions.indices.filter { s.revisions[$0] != nil } } }

    /// Whether the bucket failed to answer less than half a TTL ago. Entries expire while JetStream elects the
    /// bucket's leader (after a network partition heals, say): the registry may lack live nodes and their leases
    /// may be gone until each renews, so meanwhile a pass keeps the nodes it listed before, takes no partition
    /// free for less than half a TTL (its owner re-creates it: ``renew(_:)``), and hands nothing over.
    var settling: Bool {
        state.withLock { $0.unreachable }.map { ContinuousClock.now - $0 < ttl / 2 } ?? false
    }

    /// Notes that a request to the bucket failed to reach NATS, and logs `message`.
    private func unreachable(_ message: String) {
        state.withLock { $0.unreachable = .now }
        logLine(message)
    }

    /// The active nodes as last listed (sorted by id) and this node's fair share among them.
    public var share: (active: [String], share: Int) {
        let active = state.withLock { $0.active }
        return (active, Self.fairShare(of: node, among: active, partitions: log.layout.count))
    }

    /// One pass: announces this node, renews the leases held (disowning a partition whose renewal is refused),
    /// refreshes the other holders, takes free partitions up to this node's fair share (and any free for a whole
    /// TTL), catching each up with its stream before it takes changes, and hands over a surplus. Returns the
    /// partitions taken. Failures to reach NATS are logged and retried on the next pass.
    @discardableResult
    public func pass() -> [Int] {
        let announced = announce()
        // Before the list of nodes, whose reading can wait out a timeout of its own.
        renewHeld()
        // JetStream does not take this node's registry write: leave the rest, each step of which would wait out its
        // own timeout, to the next pass.
        guard announced else { return [] }
        let (active, listed) = listNodes()
        for index in 0..<log.layout.count where state.withLock({ $0.revisions[index] }) == nil {
            refresh(index)
        }
        let share = Self.fairShare(of: node, among: active, partitions: log.layout.count)
        let patience = settling ? ttl / 2 : .zero
        var taken: [Int] = []
        for index in 0..<log.layout.count {
            let (free, since, count) = state.withLock { s in
                (
                    s.revisions[index] == nil && s.holders[index] == nil, s.freeSince[index],
                    s.revisions.count(where: { $0 != nil })
                )
            }
            guard free else { continue }
            let freeFor = since.map { ContinuousClock.now - $0 } ?? .zero
            guard (count < share && freeFor >= patience) || freeFor >= ttl else { continue }
            do {
                if try take(index) { taken.append(index) }
            } catch {
                logLine("partition \(index): \(error)")
            }
            renewDue()
        }
        catchingUp.withLock { _ in catchUpUncertain(fromPass: true) }
        // Hands over only by a fresh list: by a stale one the receiver may be a node that is gone or cut off.
        if listed && !settling { handOver(share: share, active: active) }
        return taken
    }

    /// Rebuilds the partitions taken but not rebuilt yet, and catches up those whose last publish was refused or
    /// went unacknowledged (each once), whose lease is certain. Run under ``catchingUp``: by a pass (`fromPass`:
    /// failures logged, the leases due renewed between two), or every ``retryPause`` by the catch-up thread,
    /// failures left to the passes to log, so that a partition serves again as soon as its stream answers rather
    /// than at the next pass.
    private func catchUpUncertain(fromPass: Bool) {
        // Only while the lease is certain: a catch-up ends with a confirmation, an append, which a node whose lease
        // may have passed to another must not make.
        for index in log.uncertainPartitions where isCurrent(index) {
            do {
                if state.withLock({ $0.taking.contains(index) }) {
                    try rebuild(index, since: .now)
                } else {
                    let caughtUp = try log.catchUp(index, into: store, confirm: true)
                    logLine(
                        "partition \(index): caught up with its stream after a refused or unacknowledged write "
                            + "(replayed \(caughtUp.replayed) records)")
                }
            } catch {
                if fromPass { logLine("partition \(index): \(error)") }
            }
            if fromPass { renewDue() }
        }
    }

    /// Writes this node's registry key; false when NATS could not be reached (or the bucket has no leader).
    private func announce() -> Bool {
        do {
            try bucket.put(registryKey, Array(address.utf8))
            state.withLock { $0.announced = .now }
            try announceHTTP()
            return true
        } catch {
            unreachable("cannot announce node \(node): \(error)")
            return false
        }
    }

    /// Writes this node's registry key again when a quarter of the TTL passed since it was last written (or it
    /// never was), so that it outlives a pass held up by timeouts and comes back as soon as the bucket answers
    /// again; failures are left to the passes to log.
    private func renewRegistration() {
        guard state.withLock({ $0.announced.map { ContinuousClock.now - $0 >= ttl / 4 } ?? true }) else { return }
        if (try? bucket.put(registryKey, Array(address.utf8))) != nil { state.withLock { $0.announced = .now } }
        _ = try? announceHTTP()
    }

    /// Lists the active nodes (this node among them when it is active), and true; when the list cannot be read,
    /// the nodes last listed, and false.
    private func listNodes() -> (active: [String], listed: Bool) {
        do {
            var active = Self.activeNodes(try bucket.keys())
            if !standby && !active.contains(node) { active = (active + [node]).sorted() }
            if settling {
                // Nodes whose registry keys expired while the bucket did not answer have not renewed them yet.
                active = Set(active).union(state.withLock { $0.active }).sorted()
            }
            let listed = active
            let changed = state.withLock { s in
                defer { s.active = listed }
                return s.active != listed
            }
            if changed {
                logLine(
                    "cluster nodes: \(active.joined(separator: ", ")) active; fair share of \(node): "
                        + "\(Self.fairShare(of: node, among: active, partitions: log.layout.count)) of "
                        + "\(log.layout.count) partitions")
            }
            return (active, true)
        } catch {
            unreachable("cannot list the cluster's nodes (keeping the last list, handing nothing over): \(error)")
            return (state.withLock { $0.active }, false)
        }
    }

    /// Renews the leases held that are due: written a quarter of the TTL ago or more, or lapsed. A renewal that
    /// fails to reach NATS (no responders while JetStream elects a leader, a timeout) is tried again every
    /// ``retryPause`` while the lease is still certain (``isCurrent(_:)``), so that a moment's failure does not
    /// end it; a lapsed one is tried on every run of the renewal thread (every ``retryPause``).
    private func renewHeld() { renewing.withLock { _ in renewHeldNow() } }

    private func renewHeldNow() {
        var pending = state.withLock { s in
            s.revisions.indices.filter { index in
                s.revisions[index] != nil
                    && (s.lapsed.contains(index)
                        || s.writtenAt[index].map { ContinuousClock.now - $0 >= ttl / 4 } ?? true)
            }
        }
        while true {
            pending = pending.filter { !renew($0) }
            pending = pending.filter { index in
                guard isCurrent(index) else {
                    lapse(index)
                    return false
                }
                return true
            }
            guard !pending.isEmpty, !state.withLock({ $0.stopping }) else { return }
            Thread.sleep(forTimeInterval: Double(Self.retryPause.milliseconds) / 1000)
        }
    }

    /// The pause between tries of a renewal that failed to reach NATS.
    static let retryPause: Duration = .milliseconds(250)

    /// Logs, once, that the lease of partition `index` could not be renewed in time: this node stops serving it
    /// until a renewal succeeds.
    private func lapse(_ index: Int) {
        let first = state.withLock { s in s.revisions[index] != nil && s.lapsed.insert(index).inserted }
        if first {
            logLine(
                "cannot renew the lease of partition \(index) in time: not serving it until a renewal succeeds "
                    + "(another node takes it once it expires)")
        }
    }

    /// Renews the lease of partition `index`, which this node holds; returns false when NATS could not be reached
    /// (to try again), true when the renewal is settled: renewed, or the partition disowned because another node
    /// holds it or the lease expired. A refused renewal whose key still holds this node's value at a newer
    /// revision (an earlier renewal was stored, its acknowledgement lost) keeps the lease at that revision.
    @discardableResult
    private func renew(_ index: Int) -> Bool {
        guard let revision = state.withLock({ $0.revisions[index] }) else { return true }
        let key = log.layout.leaseKey(index)
        let sent = ContinuousClock.now
        do {
            if let renewed = try bucket.update(key, value, last: revision) {
                // Kept only if the lease is still the one renewed (not handed over or released meanwhile).
                let lapsed = state.withLock { s in
                    guard s.revisions[index] == revision else { return false }
                    s.revisions[index] = renewed
                    s.writtenAt[index] = sent
                    return s.lapsed.remove(index) != nil
                }
                if lapsed { logLine("renewed the lease of partition \(index): serving it again") }
                return true
            }
            guard state.withLock({ $0.revisions[index] }) == revision else { return true }
            let current = try bucket.get(key)
            if let current, current.value == value {
                // This node's own write, stored at a revision it did not learn: still its lease. Its expiry counts
                // from that write, sent after the last one known, so the instant kept is on the safe side. After
                // the lease lapsed that write may be a create (``recreate(_:revision:)``) whose answer was lost, and
                // another node may have held the lease before it: the partition catches up before it serves again.
                let (kept, lapsed) = state.withLock { s in
                    guard s.revisions[index] == revision else { return (false, false) }
                    s.revisions[index] = current.revision
                    return (true, s.lapsed.contains(index))
                }
                if kept && lapsed { log.takeOver(index) }
                return kept ? renew(index) : true
            }
            if current == nil, try recreate(index, revision: revision) { return true }
            let holder = current.flatMap { Self.holder($0.value) }
            let cause =
                holder.map { "node \($0.node) at \($0.address) holds it" } ?? "it expired (not renewed within \(ttl))"
            let rebuilding = state.withLock { $0.taking.contains(index) }
            disownLost(index)
            // A partition never served (its rebuild had not succeeded) did not change hands as far as clients saw.
            logLine(
                rebuilding
                    ? "partition \(index): lost its lease before its rebuild succeeded: \(cause)"
                    : "lost the lease of partition \(index): \(cause)")
            state.withLock { s in
                s.holders[index] = holder
                if holder == nil { s.freeSince[index] = .now }
            }
            return true
        } catch {
            unreachable("partition \(index): \(error)")
            return false
        }
    }

    /// Creates again the lease of partition `index`, which this node held at `revision` and which expired while
    /// the bucket did not answer; returns false when another node created it first. No other node held it at
    /// that instant, so the partition stays this node's, served again once caught up and confirmed (by the
    /// catch-up thread, within a moment when nothing was written meanwhile).
    private func recreate(_ index: Int, revision: UInt64) throws(NATSFailure) -> Bool {
        let sent = ContinuousClock.now
        let created: UInt64?
        do {
            created = try bucket.create(log.layout.leaseKey(index), value)
        } catch {
            // The create may be stored all the same (its answer lost): whatever the next renewal finds, the
            // partition catches up before it serves again.
            log.takeOver(index)
            throw error
        }
        guard let created else { return false }
        let kept = state.withLock { s in
            guard s.revisions[index] == revision else { return false }
            s.revisions[index] = created
            s.writtenAt[index] = sent
            s.lapsed.remove(index)
            return true
        }
        guard kept else {
            // Handed over or released meanwhile: not this node's to keep.
            try? bucket.delete(log.layout.leaseKey(index))
            return true
        }
        // Another node may have held the lease, and written, between the expiry and now; a server not current
        // may say the stream ends where this node applied it: caught up and confirmed before it serves again.
        log.takeOver(index)
        logLine(
            "took the lease of partition \(index) again: it expired while NATS did not answer and no other node held "
                + "it; catching up with its stream before serving it")
        return true
    }

    /// Forgets the lease of partition `index`, which another node holds or which expired, and stops serving it.
    private func disownLost(_ index: Int) {
        state.withLock { s in
            s.revisions[index] = nil
            s.holders[index] = nil
            s.writtenAt[index] = nil
            s.lapsed.remove(index)
            s.taking.remove(index)
        }
        log.disown(index)
        leaving.withLock { $0 }?(index)
    }

    /// Renews the leases held whose last write is a third of the TTL old or more: a pass that rebuilds several
    /// partitions in a row keeps the leases it already holds.
    private func renewDue() {
        let due = state.withLock { s in
            s.revisions.indices.filter { index in
                s.revisions[index] != nil && s.writtenAt[index].map { ContinuousClock.now - $0 >= ttl / 3 } ?? true
            }
        }
        renewing.withLock { _ in
            for index in due { renew(index) }
        }
    }

    /// Refuses to start a second node with this node's id: when the registry announces this id at another
    /// address, waits until that entry expires (a node restarted on another port after kill -9 left it) and
    /// throws ``ErrorCode/invalidArgument`` if it is written again meanwhile (another live node has this id);
    /// ``NATSFailure`` when JetStream does not answer.
    public func checkNodeIDUnused() throws {
        let key = registryKey
        guard let first = try read(key), first.value != Array(address.utf8) else { return }
        let other = String(decoding: first.value, as: UTF8.self)
        logLine(
            "node id \(node) is announced by \(other): waiting up to \(ttl) for that announcement to expire "
                + "(a node restarted on another address leaves one)")
        let deadline = ContinuousClock.now + ttl + ttl / 2
        while ContinuousClock.now < deadline {
            guard let entry = try read(key) else { return }
            guard entry.revision == first.revision else {
                throw HealthError(
                    .invalidArgument,
                    "node id \(node) is in use by the node at \(String(decoding: entry.value, as: UTF8.self)), which "
                        + "announced itself again while this one waited: give every node its own --node-id")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw HealthError(
            .invalidArgument,
            "node id \(node) is announced by \(other) and the announcement did not expire within \(ttl + ttl / 2)")
    }

    private func read(_ key: String) throws(NATSFailure) -> KeyValueBucket.Entry? { try bucket.get(key) }

    /// Reads the holder of partition `index`, which this node does not hold.
    private func refresh(_ index: Int) {
        do {
            let holder = try bucket.get(log.layout.leaseKey(index)).flatMap { Self.holder($0.value) }
            state.withLock { s in
                s.holders[index] = holder
                if holder != nil {
                    s.freeSince[index] = nil
                } else if s.freeSince[index] == nil {
                    s.freeSince[index] = .now
                }
            }
        } catch {
            unreachable("partition \(index): \(error)")
        }
    }

    /// Takes partition `index` if its lease is still free, and rebuilds it; returns whether it was taken. A
    /// rebuild that fails leaves the partition refusing changes; a later pass rebuilds it and logs the take then.
    private func take(_ index: Int) throws -> Bool {
        let sent = ContinuousClock.now
        guard let revision = try bucket.create(log.layout.leaseKey(index), value) else {
            refresh(index)
            return false
        }
        let started = ContinuousClock.now
        log.takeOver(index)
        state.withLock { s in
            s.revisions[index] = revision
            s.holders[index] = Holder(node: node, address: address)
            s.freeSince[index] = nil
            s.writtenAt[index] = sent
            s.taking.insert(index)
        }
        // Under the catch-up lock: the catch-up thread would otherwise rebuild the same partition at once.
        try catchingUp.withLock { _ in try rebuild(index, since: started) }
        return true
    }

    /// Catches partition `index`, whose lease this node created, up with its stream, and logs
    /// `took partition` with what it loaded and how long it took since `started`.
    private func rebuild(_ index: Int, since started: ContinuousClock.Instant) throws {
        let caughtUp = try log.catchUp(index, into: store, confirm: true)
        state.withLock { _ = $0.taking.remove(index) }
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        let snapshot = caughtUp.snapshot.map { head in
            "loaded its snapshot at stream sequence \(head.sequence) (\(caughtUp.snapshotSamples) samples, "
                + "\(head.dataBytes) bytes), "
        }
        logLine(
            "took partition \(index): \(snapshot ?? "")replayed \(caughtUp.replayed) records to stream sequence "
                + "\(log.lastApplied(index)) in " + String(format: "%.1f ms", milliseconds))
    }

    /// Hands over what this node holds beyond `share`, as many partitions as the other active nodes lack (as
    /// last seen), the highest indexes first.
    private func handOver(share: Int, active: [String]) {
        let (mine, counts) = state.withLock { s in
            var counts: [String: Int] = [:]
            for (index, holder) in s.holders.enumerated() where s.revisions[index] == nil {
                if let holder { counts[holder.node, default: 0] += 1 }
            }
            return (s.revisions.indices.filter { s.revisions[$0] != nil }, counts)
        }
        let rebuilding = state.withLock { $0.taking }
        guard mine.count > share else { return }
        let partitions = log.layout.count
        let lacking = active.filter { $0 != node }.map { other in
            max(0, Self.fairShare(of: other, among: active, partitions: partitions) - counts[other, default: 0])
        }.reduce(0, +)
        let surplus = min(mine.count - share, lacking)
        // Partitions still being rebuilt were never served: they are kept until they are (then handed over).
        for index in mine.filter({ !rebuilding.contains($0) }).suffix(surplus).reversed() {
            release(index)
            logLine(
                "handed partition \(index) over: held \(mine.count), fair share \(share) of \(log.layout.count) on "
                    + "\(active.count) active nodes")
        }
    }

    /// Stops serving partition `index` (waiting for an append in flight), then deletes its lease so that
    /// another node may take it at once.
    private func release(_ index: Int) {
        state.withLock { s in
            s.revisions[index] = nil
            s.holders[index] = nil
            s.freeSince[index] = .now
            s.writtenAt[index] = nil
            s.lapsed.remove(index)
            s.taking.remove(index)
        }
        log.disown(index)
        leaving.withLock { $0 }?(index)
        do {
            try bucket.delete(log.layout.leaseKey(index))
        } catch {
            logLine("partition \(index): \(error) (its lease expires within \(ttl))")
        }
    }

    /// Starts the thread that runs a ``pass()`` every third of the TTL, the one that renews the leases held
    /// (and this node's registry key) when due, every quarter of it, apart from the passes' slower steps, and the
    /// one that catches up partitions whose last publish failed; the last two look every ``retryPause``, so a
    /// lapsed lease or registry key is written again, and a partition serves again, as soon as NATS answers.
    public func start() throws {
        let passes = try PeriodicThread(name: "hkd-leases", every: ttl / 3) { [self] in pass() }
        let renewals = try PeriodicThread(name: "hkd-renewals", every: Self.retryPause) { [self] in
            renewHeld()
            renewRegistration()
        }
        let catchUps = try PeriodicThread(name: "hkd-catch-up", every: Self.retryPause) { [self] in
            _ = catchingUp.withLockIfAvailable { _ in catchUpUncertain(fromPass: false) }
        }
        state.withLock { s in
            s.passes = passes
            s.renewals = renewals
            s.catchUps = catchUps
        }
    }

    /// Stops renewing, leaves the registry and gives the leases up (deleted, so other nodes take them at once).
    public func stop() {
        let (passes, renewals, catchUps) = state.update { s in
            defer { (s.passes, s.renewals, s.catchUps) = (nil, nil, nil) }
            s.stopping = true
            return (s.passes, s.renewals, s.catchUps)
        }
        catchUps?.stop()
        renewals?.stop()
        passes?.stop()
        try? bucket.delete(registryKey)
        if httpAddress != nil { try? bucket.delete(Self.httpPrefix + node) }
        let released = held
        for index in released { release(index) }
        if !released.isEmpty {
            logLine("released partitions \(released.map(String.init).joined(separator: ",")) (stopping)")
        }
    }
}
