import Foundation
import HealthClient
import HealthModel
import HealthTLS
import TestSupport
import Testing

/// `--tls auto` in cluster mode: every node serves the one certificate the cluster keeps, so a client pinning
/// it follows redirects from node to node.
@Suite("hkd cluster mode over TLS", .serialized)
struct ClusterTLSTests {
    static let partitions = 4

    static func node(_ node: String, on nats: NATSServer, standby: Bool = false) async throws -> TestServer {
        try await TestServer(
            arguments: [
                "--auth", "off", "--cluster", nats.url, "--node-id", node, "--partitions", "\(partitions)",
                "--lease-ttl", "2", "--snapshot-interval", "0", "--tls", "auto",
            ] + (standby ? ["--standby"] : []))
    }

    @Test("both nodes serve the cluster's certificate; a pinned client is redirected from one to the other over TLS")
    func pinnedClientFollowsRedirects() async throws {
        let nats = try await NATSServer()
        let owner = try await Self.node("a", on: nats)
        try await owner.waitForLog("holds \(Self.partitions)")
        let other = try await Self.node("b", on: nats, standby: true)
        try await other.waitForLog("holds 0")
        let fingerprint = try TLSTests.loggedFingerprint(owner)
        #expect(try TLSTests.loggedFingerprint(other) == fingerprint)
        #expect(owner.logText.contains("created the cluster's self-signed TLS certificate"))
        #expect(other.logText.contains("using the cluster's self-signed TLS certificate"))
        for hkd in [owner, other] {
            let file = hkd.dataDirectory + "/" + AutomaticCertificate.keyFileName
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "\(file)")
        }

        // Connected to b, which holds nothing: the insert and the query are redirected to a, over TLS, pinned.
        let client = TLSTests.client(other, tls: TLSClientOptions(fingerprint: fingerprint))
        defer { client.close() }
        var batch = SampleBatch(batchID: 1, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        let source = SourceInfo(name: "Cluster", bundleIdentifier: "org.example.cluster")
        for minute in 0..<3 {
            let start = Int64(minute) * Micros.minute
            batch.append(start: start, end: start + Micros.minute, value: 2, source: source, uuid: UUID())
        }
        #expect(try await client.insert(batch).inserted == 3)
        #expect(try await client.samples("stepCount", subject: "anna").count == 3)
        _ = await other.stop()
        _ = await owner.stop()

        // A restart keeps the cluster's certificate, whatever the data directory held.
        let again = try await Self.node("c", on: nats)
        try await again.waitForLog("SHA-256 fingerprint")
        #expect(try TLSTests.loggedFingerprint(again) == fingerprint)
        _ = await again.stop()
    }
}

/// Requests about one subject that are not sample changes or queries, and subscriptions, go to the owner of the
/// subject's partition like the rest, wherever the client connected.
@Suite("hkd cluster mode: every request about one subject goes to its owner", .serialized)
struct ClusterPlacementTests {
    @Test("through the node holding nothing: a subscription gets the owner's changes, characteristics are stored")
    func subscriptionsAndProfilesFollowTheOwner() async throws {
        let nats = try await NATSServer()
        let arguments = ["--auth", "off", "--cluster", nats.url, "--partitions", "4", "--lease-ttl", "2"]
        let owner = try await TestServer(arguments: arguments + ["--node-id", "a"])
        try await owner.waitForLog("holds 4")
        let other = try await TestServer(arguments: arguments + ["--node-id", "b", "--standby"])
        try await other.waitForLog("holds 0")
        let viaOther = ClusterTests.client(other)
        defer { viaOther.close() }
        let viaOwner = ClusterTests.client(owner)
        defer { viaOwner.close() }

        // The subscription is made through b; the changes are written through a.
        var changes = viaOther.anchoredChanges(ChangesQuery(subject: "anna", type: "stepCount", anchor: 0))
            .makeAsyncIterator()
        _ = try await viaOwner.insert(ClusterTests.batch(id: 1, subject: "anna", rows: 3))
        var seen = 0
        while seen < 3, let result = try await changes.next() { seen += result.added.count }
        #expect(seen == 3)
        _ = try await viaOwner.insert(ClusterTests.batch(id: 2, subject: "anna", rows: 2))
        while seen < 5, let result = try await changes.next() { seen += result.added.count }
        #expect(seen == 5)

        // Characteristics set through b are stored by a (and read back through either).
        var traits = Characteristics()
        try traits.set(.biologicalSex, "female")
        _ = try await viaOther.setCharacteristics(traits, subject: "anna")
        #expect(try await viaOwner.characteristics(subject: "anna")[.biologicalSex] == "female")
        #expect(try await viaOther.characteristics(subject: "anna")[.biologicalSex] == "female")
        _ = await other.stop()
        _ = await owner.stop()
    }
}
