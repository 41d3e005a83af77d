import HealthCluster
import Testing
import TestSupport

/// The replicas a node gives the cluster's streams and buckets, and the JetStream cluster's size it counts.
@Suite("Cluster replicas")
struct ClusterReplicasTests {
    @Test("By default min(3, servers), raising existing streams; an explicit count below it is warned about")
    func defaultsAndWarnings() {
        for (servers, expected) in [(1, 1), (2, 2), (3, 3), (5, 3)] {
            let replicas = ClusterReplicas(servers: servers, requested: nil)
            #expect(replicas.count == expected)
            #expect(replicas.raisesExisting)
            #expect(replicas.warning == nil)
        }
        let explicit = ClusterReplicas(servers: 3, requested: 1)
        #expect(explicit.count == 1)
        #expect(!explicit.raisesExisting)
        #expect(explicit.warning?.hasPrefix("--replicas 1 on a JetStream cluster of 3 servers") == true)
        #expect(ClusterReplicas(servers: 3, requested: 3).warning == nil)
        #expect(ClusterReplicas(servers: 1, requested: 1).warning == nil)
        #expect(ClusterReplicas(servers: 5, requested: 5).warning == nil)
    }

    @Test("The shortfall names the streams with fewer replicas than the servers allow, and their fewest")
    func shortfall() {
        let replicas = ClusterReplicas(servers: 3, requested: 1)
        #expect(replicas.shortfall(partitionStreams: [3, 3], others: [("KV_HK_LEASES", 3)]) == nil)
        let warning = replicas.shortfall(
            partitionStreams: [1, 3, 2], others: [("HK_SNAPSHOTS", 3), ("KV_HK_LEASES", 2)])
        #expect(
            warning?.hasPrefix("2 partition streams, KV_HK_LEASES on a JetStream cluster of 3 servers have 1 replica")
                == true, "\(warning ?? "")")
        #expect(ClusterReplicas(servers: 1, requested: nil).shortfall(partitionStreams: [1], others: []) == nil)
    }

    @Test("The cluster's size: 1 outside a NATS cluster, else the JetStream servers answering or the servers known")
    func serverCount() {
        #expect(JetStream.Servers(jetStream: ["a"], clustered: false, known: 2).count == 1)
        #expect(JetStream.Servers(jetStream: ["a", "b"], clustered: true, known: 3).count == 3)
        #expect(JetStream.Servers(jetStream: ["a", "b", "c"], clustered: true, known: 1).count == 3)
        #expect(JetStream.Servers(jetStream: [], clustered: false, known: 2).count == 2)
    }

    @Test("A lone nats-server answers for itself: one JetStream server, not clustered")
    func loneServer() async throws {
        let server = try await NATSServer()
        let js = try JetStream(urls: server.url)
        defer { js.close() }
        try js.checkReady()
        let servers = try js.servers()
        #expect(servers.jetStream.count == 1)
        #expect(!servers.clustered)
        #expect(servers.count == 1)
    }
}
