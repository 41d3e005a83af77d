import HealthClient
import HealthModel
import TestSupport
import Testing

/// Cluster mode with authorization on: the nodes share one table of identities, kept in the cluster's settings
/// bucket, so a token works on every node, a redirect keeps working, and a revocation applies everywhere.
@Suite("hkd cluster mode: identities shared by every node", .serialized)
struct ClusterIdentityTests {
    @Test("an identity made through one node signs in on the other at once; grants and revocations hold on both")
    func identitiesAreTheCluster() async throws {
        let nats = try await NATSServer()
        let arguments = ["--cluster", nats.url, "--partitions", "4", "--lease-ttl", "2", "--snapshot-interval", "0"]
        let a = try await TestServer(arguments: arguments + ["--node-id", "a"])
        try await a.waitForLog("holds 4")
        // b is a standby: it holds nothing while a lives, so requests through b are redirected to a.
        let b = try await TestServer(arguments: arguments + ["--node-id", "b", "--standby"])
        try await b.waitForLog("holds 0")
        #expect(!a.token.isEmpty)
        #expect(b.token.isEmpty, "only the node that made the cluster's identities writes admin.token")
        #expect(b.logText.contains("identities kept in HK_CLUSTER/identities apply here"), "\(b.logText)")

        // a's admin token works on b; an identity made through b works on a before a's next reload.
        let adminViaB = b.client(token: a.token)
        defer { adminViaB.close() }
        let grants = [TypeGrant(type: "stepCount", share: true, read: true)]
        let created = try await adminViaB.administer(
            .create(IdentitySpec(name: "agent", subjects: ["anna"], grants: grants)))
        let agentViaA = a.client(token: created.token)
        defer { agentViaA.close() }
        #expect(try await agentViaA.insert(ClusterTests.batch(id: 1, subject: "anna", rows: 3)).inserted == 3)
        // Through b, which owns nothing: signed in on b, redirected to a, signed in there too.
        let agentViaB = b.client(token: created.token)
        defer { agentViaB.close() }
        #expect(try await agentViaB.samples("stepCount", subject: "anna").count == 3)
        do {
            _ = try await agentViaB.insert(ClusterTests.batch(id: 2, subject: "bob", rows: 1))
            Issue.record("the agent wrote a subject outside its own")
        } catch {
            #expect(error.code == .forbidden, "\(error)")
        }

        // Revoked through a: b refuses the open connection's next request once it reloaded (every second).
        let adminViaA = a.client(token: a.token)
        defer { adminViaA.close() }
        _ = try await adminViaA.administer(.revoke(name: "agent"))
        try await waitUntil(timeout: .seconds(30), "node b to refuse the revoked identity") {
            do throws(HealthClientError) {
                _ = try await agentViaB.serverInfo()
                return false
            } catch {
                return error.code == .tokenRevoked
            }
        }

        // A restarted node reads the cluster's identities, not a table of its own.
        _ = await b.stop()
        let again = try await b.restart()
        try await again.waitForLog("holds 0")
        let adminAgain = again.client(token: a.token)
        defer { adminAgain.close() }
        let listed = try await adminAgain.administer(.list).identities
        #expect(listed.map(\.spec.name).sorted() == ["admin", "agent"])
        #expect(listed.first { $0.spec.name == "agent" }?.revoked == true)
        _ = await again.stop()
        _ = await a.stop()
    }
}

/// Server info asked of any node covers every partition: the node adds up what each partition's holder last
/// published.
@Suite("hkd cluster mode: server info covers the whole cluster", .serialized)
struct ClusterServerInfoTests {
    @Test("the node holding nothing reports the subjects and samples the owner holds")
    func serverInfoAddsUpThePartitions() async throws {
        let (nats, owner, other) = try await ClusterTests.twoNodes()
        _ = nats
        let writer = ClusterTests.client(owner)
        defer { writer.close() }
        let subjects = (0..<6).map { "person-\($0)" }
        for (i, subject) in subjects.enumerated() {
            _ = try await writer.insert(ClusterTests.batch(id: UInt64(i + 1), subject: subject, rows: i + 1))
        }
        let direct = try await writer.serverInfo()
        #expect(direct.subjects == 6)
        #expect(direct.samplesPerType.map(\.samples) == [21])
        let reader = ClusterTests.client(other)
        defer { reader.close() }
        // The owner publishes every 2 s: node b agrees once it has.
        try await waitUntil(timeout: .seconds(30), "node b to report node a's 21 samples") {
            let info = try await reader.serverInfo()
            return info.subjects == 6 && info.samplesPerType.map(\.samples) == [21]
        }
    }
}
