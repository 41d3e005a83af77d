import Foundation
import HealthClient
import HealthModel
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
    static func node(_ node: String, on nats: NATSServer, leaseTTL: Int = 2) async throws -> TestServer {
        try await TestServer(arguments: [
            "--auth", "off", "--cluster", nats.url, "--node-id", node, "--partitions", "\(partitions)",
            "--lease-ttl", "\(leaseTTL)", "--snapshot-interval", "0",
        ])
    }

    static func client(_ hkd: TestServer, retry: RetryPolicy = .standard) -> HealthClient {
        HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: hkd.port, token: "", clientName: "cluster-test", requestTimeout: .seconds(10),
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

    /// The error `message` gets on `connection`; `nil` when it succeeds.
    static func failure(of message: Message, on connection: HealthConnection) async -> HealthClientError? {
        do {
            _ = try await connection.request(message)
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "A node that does not own a subject's partition answers notOwner with the owner's address; the client follows it"
    )
    func redirectToOwner() async throws {
        let nats = try await NATSServer()
        let owner = try await Self.node("a", on: nats)
        try await owner.waitForLog("holds \(Self.partitions)")
        let other = try await Self.node("b", on: nats)
        try await other.waitForLog("holds 0")

        // The wire answer: 406, retryable, starting with the owner's address.
        let connection = try HealthConnection.open(
            ClientConfiguration(host: "127.0.0.1", port: other.port, token: "", clientName: "raw"))
        defer { connection.close() }
        let refused = await Self.failure(
            of: .insert(Insert(batch: Self.batch(id: 1, subject: "anna", rows: 3))), on: connection)
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
    }

    @Test(
        "kill -9 of the owner: the other node takes the leases after the TTL, rebuilds from the streams and serves every acknowledged sample exactly once"
    )
    func failoverAfterKill() async throws {
        let nats = try await NATSServer()
        let owner = try await Self.node("a", on: nats)
        try await owner.waitForLog("holds \(Self.partitions)")
        let standby = try await Self.node("b", on: nats)
        try await standby.waitForLog("holds 0")

        let subjects = (0..<12).map { "subject-\($0)" }
        var acknowledged: [String: Set<UUID>] = [:]
        let writer = Self.client(owner, retry: .none)
        var random = SplitMix64(seed: TestSeed.value(21))
        for id in 1...120 {
            let subject = subjects[Int(random.next() % UInt64(subjects.count))]
            let batch = Self.batch(id: UInt64(id), subject: subject, rows: 1 + Int(random.next() % 20))
            let ack = try await writer.insert(batch)
            #expect(ack.inserted == batch.count)
            acknowledged[subject, default: []].formUnion(try batch.samples().map(\.uuid))
        }
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
        var present = 0
        var duplicated = 0
        var lost = 0
        for subject in subjects {
            let samples = try await reader.samples("stepCount", subject: subject)
            let uuids = samples.map(\.uuid)
            duplicated += uuids.count - Set(uuids).count
            let expected = acknowledged[subject] ?? []
            lost += expected.subtracting(uuids).count
            present += Set(uuids).intersection(expected).count
            #expect(Set(uuids) == expected, "\(subject)")
        }
        let total = acknowledged.values.reduce(0) { $0 + $1.count }
        print(
            "cluster failover: acknowledged \(total), present \(present), lost \(lost), duplicated \(duplicated); "
                + "served by the other node \(takeover) after kill -9 (lease TTL 2 s)")
        #expect(lost == 0)
        #expect(duplicated == 0)
        #expect(present == total)
        // The new owner takes changes too.
        #expect(try await reader.insert(Self.batch(id: 1000, subject: subjects[0], rows: 2)).inserted == 2)
    }
}
