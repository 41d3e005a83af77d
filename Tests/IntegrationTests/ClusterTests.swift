import Foundation
import HealthClient
import HealthCluster
import HealthModel
import HKQKit
import HealthWire
import Synchronization
import TestSupport
import Testing

/// hkd in cluster mode: two nodes on one real nats-server (JetStream on a free loopback port, a temporary store),
/// with routing by redirect and failover after kill -9.
@Suite("hkd cluster mode over NATS JetStream", .serialized)
struct ClusterTests {
    static let source = SourceInfo(name: "Cluster", bundleIdentifier: "org.example.cluster")
    static let partitions = 8

    /// hkd joining the cluster on `nats` as node `node` (authorization off: identities are per node so far).
    /// (`snapshotInterval` seconds between partition snapshots; 0: only when draining and by size.)
    static func node(
        _ node: String, on nats: NATSServer, leaseTTL: Int = 2, standby: Bool = false, snapshotInterval: Int = 0
    ) async throws -> TestServer {
        try await TestServer(
            arguments: [
                "--auth", "off", "--cluster", nats.url, "--node-id", node, "--partitions", "\(partitions)",
                "--lease-ttl", "\(leaseTTL)", "--snapshot-interval", "\(snapshotInterval)",
            ] + (standby ? ["--standby"] : []))
    }

    /// A nats-server and two nodes on it: node a, which created the cluster and holds every lease, and node b, a
    /// standby (`--standby`), which holds none while a lives.
    static func twoNodes(snapshotInterval: Int = 0) async throws -> (NATSServer, owner: TestServer, standby: TestServer)
    {
        let nats = try await NATSServer()
        let owner = try await node("a", on: nats, snapshotInterval: snapshotInterval)
        try await owner.waitForLog("holds \(partitions)")
        let standby = try await node("b", on: nats, standby: true)
        try await standby.waitForLog("holds 0")
        return (nats, owner, standby)
    }

    static func client(_ hkd: TestServer, retry: RetryPolicy = .standard) -> HealthClient {
        HealthClient(
            ClientConfiguration(
                host: hkd.host, port: hkd.port, token: "", clientName: "cluster-test", requestTimeout: .seconds(10),
                retry: retry))
    }

    static func batch(id: UInt64, subject: String, rows: Int) -> SampleBatch {
        var batch = SampleBatch(batchID: id, subject: subject, typeIdentifier: "stepCount", unit: "count")
        for row in 0..<rows {
            let start = Int64(id * 1000 + UInt64(row)) * Micros.minute
            batch.append(start: start, end: start + Micros.minute, value: 1, source: source, uuid: UUID())
        }
        return batch
    }

    /// A connection to `hkd` that neither retries nor follows redirects: what a node answers itself.
    static func raw(_ hkd: TestServer) throws -> HealthConnection {
        try HealthConnection.open(ClientConfiguration(host: hkd.host, port: hkd.port, token: "", clientName: "raw"))
    }

    /// The error an insert of `batch` gets on `connection`; `nil` when it is stored.
    static func failure(inserting batch: SampleBatch, on connection: HealthConnection) async -> HealthClientError? {
        do {
            _ = try await connection.request(.insert(Insert(batch: batch)))
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "A node that does not own a subject's partition answers notOwner with the owner's address; the client follows it"
    )
    func redirectToOwner() async throws {
        let (nats, owner, other) = try await Self.twoNodes()
        _ = nats

        // The wire answer: 406, retryable, starting with the owner's address.
        let connection = try Self.raw(other)
        defer { connection.close() }
        let refused = await Self.failure(inserting: Self.batch(id: 1, subject: "anna", rows: 3), on: connection)
        let error = try #require(refused, "node b accepted a change of a partition it does not own")
        #expect(error.code.rawValue == ErrorCode.notOwner.rawValue)
        #expect(error.isRetryable)
        #expect(error.message.hasPrefix("127.0.0.1:\(owner.port) owns partition "), "\(error.message)")

        // HealthClient, connected to the node that does not own anything, follows the redirect for changes and
        // queries alike.
        let client = Self.client(other, retry: .none)
        defer { client.close() }
        let ack = try await client.insert(Self.batch(id: 2, subject: "anna", rows: 4))
        #expect(ack.inserted == 4)
        #expect(try await client.samples("stepCount", subject: "anna").count == 4)
        let direct = Self.client(owner)
        defer { direct.close() }
        #expect(try await direct.samples("stepCount", subject: "anna").count == 4)

        // hkq cluster status, asked of either node: every partition held by a, one record in all besides the
        // confirmation a appended to each stream when it took it, no lag on a.
        let seenByB = try await client.clusterStatus()
        #expect(seenByB.node == "b")
        #expect(seenByB.partitions.map(\.index) == (0..<UInt64(Self.partitions)).map { $0 })
        #expect(seenByB.partitions.allSatisfy { $0.owner == "a" && $0.ownerAddress == "127.0.0.1:\(owner.port)" })
        #expect(seenByB.partitions.reduce(0) { $0 + $1.lastSequence } == UInt64(Self.partitions) + 1)
        let seenByA = try await direct.clusterStatus()
        #expect(seenByA.partitions.allSatisfy { $0.appliedSequence == $0.lastSequence && $0.replicas == 1 })
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(ClusterStatusCommand.rendered(seenByA, format: .json).utf8))
                as? [String: Any])
        #expect(json["node"] as? String == "a")
        #expect(json["nodes"] as? [String: Int] == ["a": Self.partitions])
        let rows = try #require(json["partitions"] as? [[String: Any]])
        #expect(rows.count == Self.partitions)
        #expect(rows.allSatisfy { $0["lag"] as? Int == 0 })
        #expect(ClusterStatusCommand.rendered(seenByA, format: .table).contains("PARTITION  OWNER  ADDRESS"))
    }

    @Test(
        "kill -9 of the owner: the other node takes the leases after the TTL, rebuilds from the streams and serves every acknowledged sample exactly once"
    )
    func failoverAfterKill() async throws {
        let (nats, owner, standby) = try await Self.twoNodes()
        _ = nats

        let subjects = Self.subjects
        var acknowledged: [String: Set<UUID>] = [:]
        let writer = Self.client(owner, retry: .none)
        var random = SplitMix64(seed: TestSeed.value(21))
        try await Self.write(120, from: 1, through: writer, random: &random, into: &acknowledged)
        writer.close()
        let killed = ContinuousClock.now
        await owner.kill()

        try await standby.waitForLog("took partition", timeout: .seconds(60))
        let reader = Self.client(standby, retry: .none)
        defer { reader.close() }
        // Served once every partition moved: the lease TTL (2 s) plus up to a third of it, plus the replay.
        try await waitUntil(timeout: .seconds(60), "node b to serve every subject") {
            for subject in subjects {
                guard (try? await reader.samples("stepCount", subject: subject)) != nil else { return false }
            }
            return true
        }
        let takeover = ContinuousClock.now - killed
        try await Self.expectExactlyOnce(
            acknowledged, through: reader, "served by the other node \(takeover) after kill -9")
        // The new owner takes changes too.
        #expect(try await reader.insert(Self.batch(id: 1000, subject: subjects[0], rows: 2)).inserted == 2)
    }

    static let subjects = (0..<12).map { "subject-\($0)" }

    /// Inserts `count` batches (ids from `first`) of random sizes for random ``subjects`` through `client`; adds
    /// the UUIDs acknowledged to `acknowledged`.
    static func write(
        _ count: Int, from first: UInt64, through client: HealthClient, random: inout SplitMix64,
        into acknowledged: inout [String: Set<UUID>]
    ) async throws {
        for id in first..<first + UInt64(count) {
            let subject = subjects[Int(random.next() % UInt64(subjects.count))]
            let batch = Self.batch(id: id, subject: subject, rows: 1 + Int(random.next() % 20))
            let ack = try await client.insert(batch)
            #expect(ack.inserted == batch.count)
            acknowledged[subject, default: []].formUnion(try batch.samples().map(\.uuid))
        }
    }

    /// Expects every sample `acknowledged` once through `reader`, nothing else; prints the counts with `note`.
    static func expectExactlyOnce(
        _ acknowledged: [String: Set<UUID>], through reader: HealthClient, _ note: String
    ) async throws {
        var present = 0
        var duplicated = 0
        var lost = 0
        for subject in subjects {
            let uuids = try await reader.samples("stepCount", subject: subject).map(\.uuid)
            duplicated += uuids.count - Set(uuids).count
            let expected = acknowledged[subject] ?? []
            lost += expected.subtracting(uuids).count
            present += Set(uuids).intersection(expected).count
            #expect(Set(uuids) == expected, "\(subject)")
        }
        let total = acknowledged.values.reduce(0) { $0 + $1.count }
        print("cluster: acknowledged \(total), present \(present), lost \(lost), duplicated \(duplicated); \(note)")
        #expect(lost == 0)
        #expect(duplicated == 0)
        #expect(present == total)
    }

    /// The partitions holding ``subjects``.
    static var partitionsWritten: Set<Int> {
        Set(subjects.map { PartitionLayout(count: partitions).partition(of: $0) })
    }

    @Test(
        "kill -9 after snapshots: the next owner loads each partition's snapshot from JetStream and replays only the stream after it; every acknowledged sample exactly once"
    )
    func takeoverFromSnapshots() async throws {
        let (nats, owner, standby) = try await Self.twoNodes(snapshotInterval: 1)
        _ = nats
        var acknowledged: [String: Set<UUID>] = [:]
        let writer = Self.client(owner, retry: .none)
        var random = SplitMix64(seed: TestSeed.value(23))
        try await Self.write(150, from: 1, through: writer, random: &random, into: &acknowledged)
        try await waitUntil(timeout: .seconds(60), "node a to snapshot every partition it wrote to") {
            Self.partitionsWritten.allSatisfy { owner.logText.contains("snapshot of partition \($0) (due)") }
        }
        // Changes after the snapshots: in the streams only.
        try await Self.write(40, from: 1000, through: writer, random: &random, into: &acknowledged)
        writer.close()
        let killed = ContinuousClock.now
        await owner.kill()

        let reader = Self.client(standby, retry: .none)
        defer { reader.close() }
        try await waitUntil(timeout: .seconds(60), "node b to serve every subject") {
            for subject in Self.subjects {
                guard (try? await reader.samples("stepCount", subject: subject)) != nil else { return false }
            }
            return true
        }
        let takeover = ContinuousClock.now - killed
        for partition in Self.partitionsWritten {
            #expect(standby.logText.contains("took partition \(partition): loaded its snapshot"), "\(partition)")
        }
        try await Self.expectExactlyOnce(
            acknowledged, through: reader, "served by the other node \(takeover) after kill -9, from snapshots")
    }

    @Test("A draining node snapshots its partitions: the node taking them over loads them and replays no record")
    func drainSnapshots() async throws {
        let (nats, owner, standby) = try await Self.twoNodes()
        _ = nats
        var acknowledged: [String: Set<UUID>] = [:]
        let writer = Self.client(owner, retry: .none)
        var random = SplitMix64(seed: TestSeed.value(24))
        try await Self.write(80, from: 1, through: writer, random: &random, into: &acknowledged)
        writer.close()
        #expect(await owner.stop() == 0)
        for partition in Self.partitionsWritten {
            #expect(owner.logText.contains("snapshot of partition \(partition) (draining)"), "\(partition)")
        }
        try await waitUntil(timeout: .seconds(60), "node b to take every partition node a wrote to") {
            Self.partitionsWritten.allSatisfy { standby.logText.contains("took partition \($0): ") }
        }
        for partition in Self.partitionsWritten {
            let took = standby.logText.split(separator: "\n").first { $0.contains("took partition \(partition): ") }
            #expect(took?.contains("loaded its snapshot") == true, "\(took ?? "")")
            #expect(took?.contains("replayed 0 records") == true, "\(took ?? "")")
        }
        let reader = Self.client(standby)
        defer { reader.close() }
        try await Self.expectExactlyOnce(acknowledged, through: reader, "after node a drained")
    }

    @Test("A second node started with the id of a live node is refused, naming that node's address")
    func duplicateNodeID() async throws {
        let nats = try await NATSServer()
        let first = try await Self.node("a", on: nats)
        try await first.waitForLog("holds \(Self.partitions)")
        do {
            let second = try await Self.node("a", on: nats)
            _ = await second.stop()
            Issue.record("a second node a started")
        } catch let error as HealthError {
            #expect(error.message.contains("node id a is in use by the node at 127.0.0.1:\(first.port)"), "\(error)")
        }
        // The first one goes on holding everything.
        let client = Self.client(first, retry: .none)
        defer { client.close() }
        #expect(try await client.insert(Self.batch(id: 1, subject: "anna", rows: 2)).inserted == 2)
    }

    @Test(
        "An owner paused with SIGSTOP past its lease cannot append once it runs again: refused, and then sent to the new owner"
    )
    func staleOwnerAfterPause() async throws {
        let (nats, owner, standby) = try await Self.twoNodes()
        _ = nats
        let writer = Self.client(owner, retry: .none)
        defer { writer.close() }
        #expect(try await writer.insert(Self.batch(id: 1, subject: "anna", rows: 3)).inserted == 3)

        let pid = try #require(owner.processIdentifier)
        kill(pid, SIGSTOP)
        var resumed = false
        defer { if !resumed { kill(pid, SIGCONT) } }
        // The standby takes the partition once the paused owner's lease expired, and takes changes.
        let reader = Self.client(standby, retry: .none)
        defer { reader.close() }
        let taken = Self.batch(id: 2, subject: "anna", rows: 4)
        try await waitUntil(timeout: .seconds(60), "node b to take anna's partition and store batch 2") {
            (try? await reader.insert(taken)) != nil
        }
        kill(pid, SIGCONT)
        resumed = true

        // The former owner has not noticed yet, or has: either way it stores nothing.
        let connection = try Self.raw(owner)
        defer { connection.close() }
        let staleBatch = Self.batch(id: 3, subject: "anna", rows: 5)
        let stale = await Self.failure(inserting: staleBatch, on: connection)
        let refusal = try #require(stale, "the paused owner appended after it lost its lease")
        #expect(
            [ErrorCode.notOwner.rawValue, ErrorCode.storageUnavailable.rawValue].contains(refusal.code.rawValue),
            "\(refusal)")
        // Soon it sends clients to the new owner; or, as node a is active again and b a standby, b hands the
        // partition back and a serves it, rebuilt from the stream (then a stores batch 4, once: its id repeats).
        var servedAgain = false
        try await waitUntil(timeout: .seconds(30), "node a to name node b as anna's owner, or to serve anna again") {
            let error = await Self.failure(inserting: Self.batch(id: 4, subject: "anna", rows: 1), on: connection)
            servedAgain = error == nil
            return servedAgain
                || (error?.code == .notOwner && error?.message.hasPrefix("127.0.0.1:\(standby.port) ") == true)
        }
        // Read with retries, through whichever node holds anna's partition by then.
        let afterwards = Self.client(standby)
        defer { afterwards.close() }
        let stored = try await afterwards.samples("stepCount", subject: "anna")
        #expect(Set(stored.map(\.uuid)).isDisjoint(with: try staleBatch.samples().map(\.uuid)))
        #expect(
            stored.count == (servedAgain ? 8 : 7),
            "batches 1 and 2 (and 4 if a served anna again), and nothing the paused owner was sent")
    }
}
