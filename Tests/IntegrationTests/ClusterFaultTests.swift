import Foundation
import HealthClient
import HealthCluster
import HealthModel
import HealthWire
import Synchronization
import TestSupport
import Testing

/// Three hkd nodes on a 3-server NATS cluster (3 replicas of every stream and bucket): rebalancing when a node
/// joins, kill -9 of a node under write load, and a rolling restart under write load. Every test counts the
/// acknowledged samples and checks that each is stored exactly once.
@Suite("hkd cluster: three nodes on a 3-server NATS cluster, under write load", .serialized)
struct ClusterFaultTests {
    static let partitions = 8
    static let layout = PartitionLayout(count: partitions)
    static let subjects = (0..<24).map { "person-\($0)" }

    /// A 3-server NATS cluster and the URLs a node is given.
    static func natsCluster() async throws -> (servers: [NATSServer], urls: String) {
        let servers = try await NATSServer.cluster(size: 3)
        return (servers, servers.map(\.url).joined(separator: ","))
    }

    /// hkd node `id` of the cluster on `urls` with the default replicas (3 on these three servers), lease TTL
    /// 2 s. Until the NATS cluster elected its leaders hkd waits.
    static func node(_ id: String, urls: String) async throws -> TestServer {
        try await TestServer(
            arguments: [
                "--auth", "off", "--cluster", urls, "--node-id", id, "--partitions", "\(partitions)",
                "--lease-ttl", "2", "--snapshot-interval", "0",
            ], startTimeout: .seconds(90))
    }

    static func client(_ hkd: TestServer, retry: RetryPolicy = .standard) -> HealthClient {
        ClusterTests.client(hkd, retry: retry)
    }

    /// How many partitions each node holds as `hkd` sees it (`hkq cluster status`); nil when it does not answer.
    static func holdings(seenBy hkd: TestServer) async -> [String: Int]? {
        let client = client(hkd, retry: .none)
        defer { client.close() }
        guard let status = try? await client.clusterStatus() else { return nil }
        var counts: [String: Int] = [:]
        for partition in status.partitions where !partition.owner.isEmpty { counts[partition.owner, default: 0] += 1 }
        return counts
    }

    /// Waits until every node of `nodes` sees the partitions held as `expected` says; returns how long it took.
    @discardableResult
    static func waitForHoldings(_ expected: [String: Int], seenBy nodes: [TestServer], timeout: Duration = .seconds(60))
        async throws -> Duration
    {
        let started = ContinuousClock.now
        var seen: [[String: Int]?] = []
        try await waitUntil(timeout: timeout, "holdings \(expected); last seen \(seen)") {
            seen = []
            for node in nodes { seen.append(await holdings(seenBy: node)) }
            return seen.allSatisfy { $0 == expected }
        }
        return ContinuousClock.now - started
    }

    /// The samples acknowledged to the writers, by subject, and how many inserts failed after their retries.
    final class Ledger: Sendable {
        private let acknowledged = Mutex<[String: [UUID]]>([:])
        private let failures = Atomic<Int>(0)
        let stopping = Atomic<Bool>(false)

        /// Records `batch` as acknowledged by `who` (for ``events``).
        func record(_ batch: SampleBatch, by who: String = "") throws {
            let uuids = try batch.samples().map(\.uuid)
            let line = "\(Date()) \(who) batch \(batch.batchID) \(batch.subject) \(uuids.map(\.uuidString))"
            acknowledged.withLock { $0[batch.subject, default: []].append(contentsOf: uuids) }
            events.withLock { $0.append(line) }
        }
        /// One line per acknowledged batch: when, by whom, its id, subject and samples.
        let events = Mutex<[String]>([])
        func failed() { failures.add(1, ordering: .relaxed) }
        var failureCount: Int { failures.load(ordering: .relaxed) }
        var samples: [String: [UUID]] { acknowledged.withLock { $0 } }
        var count: Int { acknowledged.withLock { $0.values.reduce(0) { $0 + $1.count } } }
    }

    /// What the subscriptions delivered, by subject.
    final class Delivered: Sendable {
        let uuids = Mutex<[String: [UUID]]>([:])
    }

    /// Retries that ride out a takeover (a lease TTL of 2 s, then the rebuild): for 4 s, 50 ms to 500 ms apart.
    static let writerRetry = RetryPolicy(
        budget: .seconds(4), initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(500))

    /// Writer `index` inserting through `hkd` until the ledger says stop: batches of 1 to 10 samples of random
    /// subjects, each batch id used once (a retry inside the client repeats it). Only acknowledged batches go into
    /// the ledger.
    static func writer(_ index: Int, through hkd: TestServer, seed: UInt64, ledger: Ledger) -> Task<Void, Never> {
        let (host, port) = (hkd.host, hkd.port)
        return Task {
            let client = HealthClient(
                ClientConfiguration(
                    host: host, port: port, token: "", clientName: "writer-\(index)",
                    requestTimeout: .seconds(10), retry: writerRetry))
            defer { client.close() }
            var random = SplitMix64(seed: seed &+ UInt64(index))
            var id = UInt64(index) * 100_000
            while !ledger.stopping.load(ordering: .relaxed) {
                id += 1
                let subject = subjects[Int(random.next() % UInt64(subjects.count))]
                let batch = ClusterTests.batch(id: id, subject: subject, rows: 1 + Int(random.next() % 10))
                do {
                    _ = try await client.insert(batch)
                    try? ledger.record(batch, by: "writer \(index) via \(host):\(port)")
                } catch {
                    ledger.failed()
                }
            }
        }
    }

    /// Waits until the writers got `count` more samples acknowledged than `from`.
    static func waitForAcknowledged(_ ledger: Ledger, moreThan from: Int, by count: Int) async throws {
        try await waitUntil(timeout: .seconds(60), "\(count) more samples acknowledged (\(ledger.count) so far)") {
            ledger.count >= from + count
        }
    }

    /// Counts what `reader` returns against the ledger: acknowledged, lost (acknowledged, not stored) and
    /// duplicated (stored twice); prints them as `label`, expects nothing lost or doubled, and returns the two.
    @discardableResult
    static func check(_ ledger: Ledger, through reader: HealthClient, _ label: String) async throws -> (
        lost: Int, duplicated: Int
    ) {
        let acknowledged = ledger.samples
        var (total, lost, duplicated, stored) = (0, 0, 0, 0)
        var missing: [String] = []
        for subject in subjects {
            let uuids = try await reader.samples("stepCount", subject: subject).map(\.uuid)
            let unique = Set(uuids)
            duplicated += uuids.count - unique.count
            stored += uuids.count
            let expected = acknowledged[subject] ?? []
            total += expected.count
            duplicated += expected.count - Set(expected).count
            let gone = Set(expected).subtracting(unique)
            lost += gone.count
            missing += gone.prefix(10).map { "\(subject) (partition \(layout.partition(of: subject))) \($0)" }
        }
        print(
            "\(label): acknowledged \(total), lost \(lost), duplicated \(duplicated) (stored \(stored); "
                + "\(ledger.failureCount) inserts failed after their retries, outcome unknown)")
        #expect(total > 0)
        #expect(lost == 0, "not stored: \(missing.prefix(20))")
        #expect(duplicated == 0)
        return (lost, duplicated)
    }

    /// Every change of `subject` after `anchor`, paged, and the anchor reached.
    static func changes(of subject: String, after anchor: UInt64, through client: HealthClient) async throws -> (
        uuids: [UUID], anchor: UInt64
    ) {
        var uuids: [UUID] = []
        var anchor = anchor
        while true {
            let page = try await client.changes("stepCount", subject: subject, since: anchor)
            uuids += try page.added.samples().map(\.uuid)
            anchor = page.anchor
            if !page.hasMore { return (uuids, anchor) }
        }
    }

    @Test(
        "Writes through every node are stored once; a node that joins gets its fair share, and anchors from the old owner stay valid at the new one"
    )
    func writesThroughEveryNodeAndRebalancing() async throws {
        let (servers, urls) = try await Self.natsCluster()
        _ = servers
        let a = try await Self.node("a", urls: urls)
        try await a.waitForLog("holds \(Self.partitions)")
        let b = try await Self.node("b", urls: urls)
        let twoNodes = try await Self.waitForHoldings(["a": 4, "b": 4], seenBy: [a, b])
        print("node b joined: a and b hold 4 partitions each after \(twoNodes)")

        // Writers through both nodes.
        let seed = TestSeed.value(2101)
        let ledger = Ledger()
        var writers = [Self.writer(0, through: a, seed: seed, ledger: ledger)]
        writers.append(Self.writer(1, through: b, seed: seed, ledger: ledger))
        try await Self.waitForAcknowledged(ledger, moreThan: 0, by: 300)
        ledger.stopping.store(true, ordering: .relaxed)
        for writer in writers { await writer.value }
        let before = ledger.samples

        // Every subject's anchor as its owner (a or b) answers it now.
        let reader = Self.client(a)
        defer { reader.close() }
        var anchors: [String: UInt64] = [:]
        for subject in Self.subjects {
            let (uuids, anchor) = try await Self.changes(of: subject, after: 0, through: reader)
            #expect(Set(uuids) == Set(before[subject] ?? []), "\(subject)")
            anchors[subject] = anchor
        }

        // A subscription per subject from those anchors, made through a: each must deliver exactly the changes
        // written from now on, also for the subjects whose partition moves (the old owner ends the
        // subscription; the client subscribes again at the new owner from the last anchor it delivered).
        let subscriber = Self.client(a)
        defer { subscriber.close() }
        let delivered = Delivered()
        let subscriptions = Self.subjects.map { subject in
            let stream = subscriber.anchoredChanges(
                ChangesQuery(subject: subject, type: "stepCount", anchor: anchors[subject] ?? 0))
            return Task {
                do {
                    for try await result in stream {
                        let uuids = try result.added.samples().map(\.uuid)
                        delivered.uuids.withLock { $0[subject, default: []] += uuids }
                    }
                } catch {
                    print("subscription to \(subject) ended: \(error)")
                }
            }
        }
        defer { for task in subscriptions { task.cancel() } }

        // Node c joins: a and b hand partitions over until the shares are 3, 3 and 2.
        let joined = ContinuousClock.now
        let c = try await Self.node("c", urls: urls)
        try await Self.waitForHoldings(["a": 3, "b": 3, "c": 2], seenBy: [a, b, c])
        let rebalance = ContinuousClock.now - joined
        try await c.waitForLog("took partition")
        #expect(a.logText.contains("handed partition") || b.logText.contains("handed partition"))

        // Writers through all three nodes.
        ledger.stopping.store(false, ordering: .relaxed)
        writers = [a, b, c].enumerated().map {
            Self.writer(10 + $0.offset, through: $0.element, seed: seed, ledger: ledger)
        }
        try await Self.waitForAcknowledged(ledger, moreThan: ledger.count, by: 300)
        ledger.stopping.store(true, ordering: .relaxed)
        for writer in writers { await writer.value }
        try await Self.check(ledger, through: reader, "three nodes, writes through each")

        // The anchors obtained before c joined, asked of the owners now (c for the partitions it took): exactly
        // the changes written since.
        let after = ledger.samples
        var moved = 0
        for subject in Self.subjects {
            let (uuids, _) = try await Self.changes(of: subject, after: anchors[subject] ?? 0, through: reader)
            let written = Set(after[subject] ?? []).subtracting(before[subject] ?? [])
            #expect(uuids.count == Set(uuids).count, "\(subject)")
            #expect(Set(uuids) == written, "\(subject): changes since the old owner's anchor")
            let holder = try #require(await Self.owner(of: subject, seenBy: c))
            if holder == "c" { moved += 1 }
        }
        print(
            "cluster rebalance: c joined, shares 3/3/2 reached after \(rebalance) (lease TTL 2 s); "
                + "\(moved) subjects moved to c, their anchors valid there")
        #expect(moved > 0)

        // The subscriptions delivered every later change once, wherever their subject went.
        let expected = Dictionary(
            uniqueKeysWithValues: Self.subjects.map { ($0, Set(after[$0] ?? []).subtracting(before[$0] ?? [])) })
        try await waitUntil(timeout: .seconds(60), "every subscription to deliver its subject's later changes") {
            let seen = delivered.uuids.withLock { $0 }
            return Self.subjects.allSatisfy { Set(seen[$0] ?? []) == expected[$0] }
        }
        let seen = delivered.uuids.withLock { $0 }
        let twice = Self.subjects.reduce(0) { $0 + (seen[$1]?.count ?? 0) - Set(seen[$1] ?? []).count }
        print(
            "subscriptions across the rebalance: delivered \(seen.values.reduce(0) { $0 + $1.count }) changes, "
                + "duplicated \(twice)")
        #expect(twice == 0)
    }

    /// The node holding `subject`'s partition as `hkd` sees it.
    static func owner(of subject: String, seenBy hkd: TestServer) async -> String? {
        let client = client(hkd, retry: .none)
        defer { client.close() }
        let status = try? await client.clusterStatus()
        return status?.partitions.first { $0.index == UInt64(layout.partition(of: subject)) }?.owner
    }

    @Test(
        "kill -9 of a node under write load: the others take its partitions and every acknowledged sample is stored once"
    )
    func killUnderWriteLoad() async throws {
        let (servers, urls) = try await Self.natsCluster()
        _ = servers
        let a = try await Self.node("a", urls: urls)
        try await a.waitForLog("holds \(Self.partitions)")
        let b = try await Self.node("b", urls: urls)
        let c = try await Self.node("c", urls: urls)
        try await Self.waitForHoldings(["a": 3, "b": 3, "c": 2], seenBy: [a, b, c])

        let seed = TestSeed.value(2102)
        let ledger = Ledger()
        let writers = [a, b, c].enumerated().map {
            Self.writer($0.offset, through: $0.element, seed: seed, ledger: ledger)
        }
        try await Self.waitForAcknowledged(ledger, moreThan: 0, by: 200)
        let atKill = ledger.count
        let killed = ContinuousClock.now
        await b.kill()
        // a and c take b's partitions once its leases expire: 4 each.
        try await Self.waitForHoldings(["a": 4, "c": 4], seenBy: [a, c])
        let takeover = ContinuousClock.now - killed
        try await Self.waitForAcknowledged(ledger, moreThan: ledger.count, by: 200)
        ledger.stopping.store(true, ordering: .relaxed)
        for writer in writers { await writer.value }
        print("kill -9 of node b after \(atKill) acknowledged samples: a and c hold every partition after \(takeover)")

        let reader = Self.client(c)
        defer { reader.close() }
        try await Self.check(ledger, through: reader, "kill -9 under write load")
    }

    @Test("A rolling restart of the three nodes under write load loses nothing and stores nothing twice")
    func rollingRestartUnderWriteLoad() async throws {
        let (servers, urls) = try await Self.natsCluster()
        _ = servers
        var nodes: [String: TestServer] = [:]
        nodes["a"] = try await Self.node("a", urls: urls)
        try await nodes["a"]!.waitForLog("holds \(Self.partitions)")
        nodes["b"] = try await Self.node("b", urls: urls)
        nodes["c"] = try await Self.node("c", urls: urls)
        let balanced = ["a": 3, "b": 3, "c": 2]
        try await Self.waitForHoldings(balanced, seenBy: Array(nodes.values))

        let seed = TestSeed.value(2103)
        let ledger = Ledger()
        // The writers keep writing through their node's address, which a restart on the same port keeps.
        let writers = ["a", "b", "c"].enumerated().map {
            Self.writer($0.offset, through: nodes[$0.element]!, seed: seed, ledger: ledger)
        }
        try await Self.waitForAcknowledged(ledger, moreThan: 0, by: 150)
        for id in ["a", "b", "c"] {
            let others = nodes.filter { $0.key != id }
            let node = nodes[id]!
            let stopped = ContinuousClock.now
            #expect(await node.stop() == 0)
            #expect(node.logText.contains("released partitions"), "\(id)")
            let shares = Dictionary(uniqueKeysWithValues: others.keys.map { ($0, Self.partitions / 2) })
            try await Self.waitForHoldings(shares, seenBy: Array(others.values))
            let drained = ContinuousClock.now - stopped
            let restarted = try await node.restart(samePort: true)
            nodes[id] = restarted
            try await Self.waitForHoldings(balanced, seenBy: Array(nodes.values))
            let back = ContinuousClock.now - stopped
            print("rolling restart: node \(id) drained to the others in \(drained); shares back after \(back)")
            try await Self.waitForAcknowledged(ledger, moreThan: ledger.count, by: 100)
        }
        ledger.stopping.store(true, ordering: .relaxed)
        for writer in writers { await writer.value }
        let reader = Self.client(nodes["a"]!)
        defer { reader.close() }
        try await Self.check(ledger, through: reader, "rolling restart under write load")
    }
}
