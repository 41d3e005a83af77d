import HealthClient
import TestSupport
import Testing

/// The listener's connection limit against the real hkd. Garbage, oversized frames, zip bombs and idle
/// connections, which the connection logic answers alone, run in process: HealthServerTests'
/// EmbeddedProtocolTests.
@Suite("hostile clients", .serialized)
struct HostileClientTests {
    @Test("connections beyond the limit are refused with tooManyConnections, retryable")
    func connectionLimit() async throws {
        let hkd = try await TestServer(arguments: ["--max-connections", "2"])
        let first = hkd.client(name: "one")
        let second = hkd.client(name: "two")
        try await first.ping()
        try await second.ping()
        let third = HealthClient(ClientConfiguration(port: hkd.port, token: hkd.token, retry: .none))
        do {
            try await third.ping()
            Issue.record("a third connection was served")
        } catch {
            #expect(error.code == .tooManyConnections)
            #expect(error.isRetryable)
        }
        first.close()
        try await waitUntil("hkd to count the first connection closed") {
            try await second.serverInfo().connections == 1
        }
        try await third.ping()
        second.close()
        third.close()
        await hkd.stop()
    }
}
