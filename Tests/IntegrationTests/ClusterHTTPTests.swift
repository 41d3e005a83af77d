import Foundation
import HealthCluster
import HealthModel
import TestSupport
import Testing

/// The HTTP API in cluster mode: a node sends a request about a subject another node owns there, with a
/// `307 Temporary Redirect` to that node's HTTP address (announced in `HK_LEASES` as `h.<node id>`).
@Suite("HTTP API in cluster mode", .serialized)
struct ClusterHTTPTests {
    @Test("a node that does not own the subject answers 307 to the owner's HTTP API; once it owns it, it answers")
    func redirectToOwner() async throws {
        let (nats, owner, standby) = try await ClusterTests.twoNodes()
        _ = nats
        let (ownerPort, standbyPort) = (try HTTPAPITests.httpPort(of: owner), try HTTPAPITests.httpPort(of: standby))
        let anna = ["--server", "127.0.0.1:\(owner.port)", "--subject", "anna"]
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: HTTPAPITests.walk).status == 0)
        let target = "/v1/subjects/anna/collection?type=stepCount&interval=1d&tz=America/New_York"
        let expected = try await HKQBinaryTests.hkq(
            anna + ["--format", "json", "collection", "stepCount", "--interval", "1d", "--tz", "America/New_York"])

        let redirected = try HTTPAPITests.exchange(
            [
                HTTPAPITests.get(target, token: nil),
                HTTPAPITests.request(
                    "POST", "/v1/subjects/anna/samples", token: nil, headers: ["Content-Type: text/csv"],
                    body: HTTPAPITests.walk),
                HTTPAPITests.get("/v1/types", token: nil),
            ], port: standbyPort)
        #expect(redirected.map(\.status) == [307, 307, 200], "\(redirected.map(\.body))")
        #expect(redirected[0].headers["location"] == "http://127.0.0.1:\(ownerPort)\(target)")
        #expect(redirected[1].headers["location"] == "http://127.0.0.1:\(ownerPort)/v1/subjects/anna/samples")
        // Following the Location gives hkq's answer.
        let followed = try #require(
            try HTTPAPITests.exchange([HTTPAPITests.get(target, token: nil)], port: ownerPort).first)
        #expect(followed.status == 200)
        #expect(followed.body == expected.out)

        // The owner drains: the standby takes its partitions and answers itself.
        _ = await owner.stop()
        try await waitUntil(timeout: .seconds(30), "the standby to answer for anna itself") {
            try HTTPAPITests.exchange([HTTPAPITests.get(target, token: nil)], port: standbyPort).first?.status == 200
        }
        let taken = try #require(
            try HTTPAPITests.exchange([HTTPAPITests.get(target, token: nil)], port: standbyPort).first)
        #expect(taken.body == expected.out)
        _ = await standby.stop()
    }

    @Test(
        "an event stream whose subject's partition is handed over ends with an end event (reason moved) and its last chunk; reconnecting with Last-Event-ID follows the 307 and resumes at the new owner"
    )
    func eventStreamEndsWhenPartitionMoves() async throws {
        let nats = try await NATSServer()
        let owner = try await ClusterTests.node("a", on: nats)
        try await owner.waitForLog("holds \(ClusterTests.partitions)")
        // A second active node takes a fair share: a hands over its highest partitions, 4 to 7, first.
        let layout = PartitionLayout(count: ClusterTests.partitions)
        let subject = try #require((0..<1000).map { "walker\($0)" }.first { layout.partition(of: $0) == 7 })
        let ownerPort = try HTTPAPITests.httpPort(of: owner)
        let client = ClusterTests.client(owner)
        defer { client.close() }
        let start: Timestamp = 1_796_083_200 * 1_000_000
        func steps(_ minute: Int64) -> Sample {
            Sample(
                uuid: UUID(), subject: subject, type: "stepCount", start: start + minute * 60_000_000,
                end: start + (minute + 1) * 60_000_000, value: 10, unit: "count", source: ClusterTests.source)
        }
        _ = try await client.insert([steps(0)])
        let target = "/v1/subjects/\(subject)/events?type=stepCount"
        let reader = try HTTPStreamingTests.ResponseReader(port: ownerPort)
        try reader.send(HTTPStreamingTests.get(target, token: ""))
        #expect(try reader.head().status == 200)
        let first = try #require(try reader.nextNamedEvent())
        let lastID = try #require(first.id)

        let joiner = try await ClusterTests.node("c", on: nats)
        let moved = try #require(try reader.nextNamedEvent())
        #expect(moved.event == "end", "\(moved)")
        let end = try #require(try JSONSerialization.jsonObject(with: Data(moved.data.utf8)) as? [String: Any])
        #expect(end["reason"] as? String == "moved", "\(moved.data)")
        let joinerPort = try HTTPAPITests.httpPort(of: joiner)
        if let location = end["location"] as? String {
            #expect(location == "http://127.0.0.1:\(joinerPort)\(target)")
        }
        #expect(try reader.nextNamedEvent() == nil)
        #expect(reader.endedWithLastChunk, "the body ended without its last chunk")

        // The client reconnects where it was: sent to c once c serves the partition, and resumes there.
        try await waitUntil(timeout: .seconds(30), "node a to send \(subject)'s events to node c") {
            let answer = try HTTPAPITests.exchange([HTTPAPITests.get(target, token: nil)], port: ownerPort).first
            return answer?.status == 307
                && answer?.headers["location"] == "http://127.0.0.1:\(joinerPort)\(target)"
        }
        let joinerClient = ClusterTests.client(joiner)
        defer { joinerClient.close() }
        let later = steps(1)
        try await waitUntil(timeout: .seconds(30), "node c to take a write of \(subject)") {
            (try? await joinerClient.insert([later])) != nil
        }
        let resumed = try HTTPStreamingTests.ResponseReader(port: joinerPort)
        try resumed.send(HTTPStreamingTests.get(target, token: "", headers: ["Last-Event-ID: \(lastID)"]))
        #expect(try resumed.head().status == 200)
        let missed = try #require(try resumed.nextNamedEvent())
        #expect(missed.data.contains(later.uuid.uuidString) && missed.event == nil, "\(missed)")
        _ = await joiner.stop()
        _ = await owner.stop()
    }
}
