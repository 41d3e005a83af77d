import Foundation
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
}
