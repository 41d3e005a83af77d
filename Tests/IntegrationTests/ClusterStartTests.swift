import Foundation
import HealthClient
import HealthCluster
import HealthModel
import HKQKit
import HealthWire
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Starting a cluster the way an operator does: hkd nodes started before or with their NATS servers wait for
/// JetStream and then serve; the replicas default to the JetStream cluster's size (up to 3), and fewer are
/// warned about.
@Suite("hkd cluster: cold start and replicas")
struct ClusterStartTests {
    /// hkd node `id` on `urls` (auth off, 8 partitions, metrics on a free port) with `extra`
    /// arguments; `whenLogged` as ``TestServer``'s.
    static func node(
        _ id: String, urls: String, extra: [String] = [],
        whenLogged: (text: String, action: @Sendable (Int32) async throws -> Void)? = nil
    ) async throws -> TestServer {
        try await TestServer(
            arguments: [
                "--auth", "off", "--cluster", urls, "--node-id", id, "--partitions", "8", "--snapshot-interval", "0",
                "--metrics-listen", "127.0.0.1:0",
            ] + extra, startTimeout: .seconds(90), whenLogged: whenLogged)
    }

    /// `/readyz` of `hkd`'s metrics endpoint.
    static func readiness(_ hkd: TestServer) throws -> String {
        let log = hkd.logText
        let marker = try #require(log.range(of: "metrics on 127.0.0.1:"))
        let port = try #require(Int(log[marker.upperBound...].prefix { $0.isNumber }))
        return try PlainHTTP.get("/readyz", port: port).status
    }

    /// The replicas of every stream and bucket of the cluster on `urls`, by stream name.
    static func replicas(urls: String, partitions: Int) throws -> [String: Int] {
        let jetStream = try JetStream(urls: urls)
        defer { jetStream.close() }
        let layout = PartitionLayout(count: partitions)
        let names =
            (0..<partitions).map(layout.streamName) + [
                PartitionSnapshots.streamName, ClusterSetup.bucketStream(ClusterSetup.settingsBucket),
                ClusterSetup.bucketStream(PartitionLeases.bucketName),
            ]
        var replicas: [String: Int] = [:]
        for name in names { replicas[name] = try jetStream.streamState(name).replicas }
        return replicas
    }

    @Test(
        "Three nodes started with their 3-server NATS cluster wait for JetStream, serve with 3 replicas by default, and keep taking writes after kill -9 of a NATS server"
    )
    func coldStartAndDefaultReplicas() async throws {
        let ports = try (0..<3).map { _ in try NATSServer.freePort() }
        let urls = NATSServer.urls(ports)
        // The nodes first (each waits for JetStream), the NATS servers right after, while the nodes start.
        async let a = Self.node("a", urls: urls)
        async let b = Self.node("b", urls: urls)
        async let c = Self.node("c", urls: urls)
        let started = ContinuousClock.now
        let servers = try await NATSServer.cluster(size: 3, clientPorts: ports)
        let nodes = try await [a, b, c]
        print("cold start: three nodes listening \(ContinuousClock.now - started) after the NATS servers started")
        for node in nodes {
            #expect(try Self.readiness(node) == "HTTP/1.1 200 OK")
            #expect(!node.logText.contains("cannot start"))
        }
        let replicas = try Self.replicas(urls: urls, partitions: 8)
        #expect(replicas.count == 11)
        #expect(replicas.values.allSatisfy { $0 == 3 }, "\(replicas)")
        let status = try await ClusterTests.client(nodes[0]).clusterStatus()
        #expect(status.jetStreamServers == 3)
        #expect(status.warnings.isEmpty)

        // Writers through every node; one NATS server killed under them.
        let seed = TestSeed.value(3201)
        let ledger = ClusterFaultTests.Ledger()
        let writers = nodes.indices.map { ClusterFaultTests.writer($0, through: nodes[$0], seed: seed, ledger: ledger) }
        try await ClusterFaultTests.waitForAcknowledged(ledger, moreThan: 0, by: 100)
        await servers[0].kill()
        let (killedAt, failedBefore, killed) = (ledger.count, ledger.failureCount, ContinuousClock.now)
        try await ClusterFaultTests.waitForAcknowledged(ledger, moreThan: killedAt, by: 100)
        print(
            "kill -9 of a NATS server: 100 more samples acknowledged \(ContinuousClock.now - killed) later, "
                + "\(ledger.failureCount - failedBefore) inserts failed after their retries meanwhile")
        ledger.stopping.store(true, ordering: .relaxed)
        for writer in writers { await writer.value }
        let reader = ClusterTests.client(nodes[1], retry: ClusterFaultTests.writerRetry)
        defer { reader.close() }
        // A partition whose catch-up met the election goes on at the next lease pass: wait until all answer.
        try await waitUntil(timeout: .seconds(60), "every subject to be readable again") {
            for subject in ClusterFaultTests.subjects {
                guard (try? await reader.samples("stepCount", subject: subject)) != nil else { return false }
            }
            return true
        }
        try await ClusterFaultTests.check(
            ledger, through: reader, "3 nodes started with their NATS cluster, one NATS server killed")
    }

    @Test("A node started before its NATS server waits for it, saying so, then serves; one server gets 1 replica")
    func nodeBeforeItsServer() async throws {
        let port = try NATSServer.freePort()
        let url = "nats://127.0.0.1:\(port)"
        let started = ServerBox()
        let hkd = try await Self.node(
            "solo", urls: url,
            whenLogged: ("waiting for JetStream at \(url)", { _ in started.set(try await NATSServer(port: port)) }))
        #expect(started.server != nil)
        #expect(try Self.readiness(hkd) == "HTTP/1.1 200 OK")
        let client = ClusterTests.client(hkd)
        defer { client.close() }
        let batch = ClusterTests.batch(id: 1, subject: "anna", rows: 3)
        _ = try await client.insert(batch)
        #expect(try await client.samples("stepCount", subject: "anna").count == 3)
        let status = try await client.clusterStatus()
        #expect(status.jetStreamServers == 1)
        #expect(status.warnings.isEmpty)
        #expect(status.partitions.allSatisfy { $0.replicas == 1 })
    }

    @Test("SIGTERM while a node waits for JetStream stops it cleanly")
    func stopWhileWaiting() async throws {
        let url = "nats://127.0.0.1:\(try NATSServer.freePort())"
        do {
            _ = try await Self.node(
                "waiting", urls: url,
                whenLogged: ("waiting for JetStream at \(url)", { pid in _ = Glibc.kill(pid, SIGTERM) }))
            Issue.record("hkd started without a NATS server")
        } catch {
            #expect("\(error)".contains("exit status 0"), "\(error)")
            #expect("\(error)".contains("stopped while waiting for JetStream at \(url)"), "\(error)")
        }
    }

    @Test(
        "--replicas 1 on a 3-server NATS cluster is warned about in the log and in cluster status; a node without it raises every stream to 3"
    )
    func explicitReplicasAreWarnedAndRaised() async throws {
        let servers = try await NATSServer.cluster(size: 3)
        let urls = servers.map(\.url).joined(separator: ",")
        let a = try await Self.node("a", urls: urls, extra: ["--replicas", "1"])
        #expect(a.logText.contains("--replicas 1 on a JetStream cluster of 3 servers"))
        let client = ClusterTests.client(a)
        defer { client.close() }
        let warned = try await client.clusterStatus()
        #expect(warned.jetStreamServers == 3)
        #expect(warned.warnings.count == 1)
        #expect(
            warned.warnings.first?.contains("8 partition streams, HK_SNAPSHOTS, KV_HK_CLUSTER, KV_HK_LEASES") == true)
        #expect(ClusterStatusCommand.rendered(warned, format: .table).contains("WARNING"))
        #expect(try Self.replicas(urls: urls, partitions: 8).values.allSatisfy { $0 == 1 })

        let b = try await Self.node("b", urls: urls)
        #expect(b.logText.contains("raised the replicas of stream HK_P0 from 1 to 3"))
        #expect(try Self.replicas(urls: urls, partitions: 8).values.allSatisfy { $0 == 3 })
        let raised = try await client.clusterStatus()
        #expect(raised.warnings.isEmpty)
        #expect(raised.partitions.allSatisfy { $0.replicas == 3 })
    }
}

/// The NATS server a test starts from inside hkd's start.
private final class ServerBox: Sendable {
    private let box = Mutex<NATSServer?>(nil)
    var server: NATSServer? { box.withLock { $0 } }
    func set(_ server: NATSServer) { box.withLock { $0 = server } }
}
