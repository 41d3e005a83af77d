import HealthCluster
import Testing
import TestSupport

/// HealthCluster's JetStream wrapper against a real `nats-server -js`: fenced publishing, reading back by
/// sequence, revision-checked key-value writes and expiring entries.
@Suite("JetStream through CNats")
struct JetStreamTests {
    @Test("A published message is stored at the next sequence and reads back; a stale expected sequence stores nothing")
    func publishAndRead() async throws {
        let server = try await NATSServer()
        let js = try JetStream(urls: server.url)
        defer { js.close() }
        try js.addStream("HK_TEST", subject: "hk.test", replicas: 1)
        // Adding it again keeps it (a second node opening the same cluster).
        try js.addStream("HK_TEST", subject: "hk.test", replicas: 1)
        #expect(try js.publish([1, 2, 3], to: "hk.test", expectedLast: 0) == 1)
        #expect(try js.publish([4, 5], to: "hk.test", expectedLast: 1) == 2)
        // A writer that believes the stream ends at 1 (or is empty) is refused: fencing.
        for stale: UInt64 in [0, 1] {
            do {
                _ = try js.publish([9], to: "hk.test", expectedLast: stale)
                Issue.record("a publish expecting sequence \(stale) was stored")
            } catch {
                #expect(error.isWrongLastSequence, "\(error)")
            }
        }
        #expect(try js.message("HK_TEST", sequence: 1) == [1, 2, 3])
        #expect(try js.message("HK_TEST", sequence: 2) == [4, 5])
        #expect(try js.message("HK_TEST", sequence: 3) == nil)
        let state = try js.streamState("HK_TEST")
        #expect(state.lastSequence == 2)
        #expect(state.messages == 2)
        #expect(state.replicas == 1)
    }

    @Test("Key-value writes are checked against the revision read; an entry expires after the bucket's TTL")
    func keyValue() async throws {
        let server = try await NATSServer()
        let js = try JetStream(urls: server.url)
        defer { js.close() }
        let kv = try js.keyValue("HK_TEST_KV")
        #expect(try kv.get("a") == nil)
        let first = try #require(try kv.create("a", Array("one".utf8)))
        #expect(try kv.create("a", Array("two".utf8)) == nil)
        #expect(try kv.update("a", Array("two".utf8), last: first + 7) == nil)
        let second = try #require(try kv.update("a", Array("two".utf8), last: first))
        #expect(second > first)
        let entry = try #require(try kv.get("a"))
        #expect(entry.value == Array("two".utf8))
        #expect(entry.revision == second)

        let leases = try js.keyValue("HK_TEST_TTL", ttl: .seconds(1))
        _ = try #require(try leases.create("p", [1]))
        try await waitUntil(timeout: .seconds(10), "the entry to expire") { (try? leases.get("p")) == .some(nil) }
        #expect(try leases.create("p", [2]) != nil)
    }
}
