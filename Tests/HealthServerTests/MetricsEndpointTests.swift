import Foundation
import HealthPosix
import TestSupport
import Testing

@testable import HealthServer

#if canImport(Glibc)
    import Glibc
#endif

/// The metrics endpoint's limits, in-process with small ones: no peer can keep a probe out.
@Suite("metrics endpoint limits", .serialized)
struct MetricsEndpointTests {
    /// Whether the server closed `socket` (end of stream, or a reset for a connection with unread bytes) without
    /// sending anything, within `timeout`.
    static func closedSilently(_ socket: ClientSocket, within timeout: Duration) -> Bool {
        do {
            return try socket.read(maxBytes: 1024, timeout: timeout).isEmpty
        } catch {
            return error.code == ECONNRESET
        }
    }

    @Test("while hkd starts /healthz answers 200 and /readyz and /metrics 503 starting")
    func starting() throws {
        let endpoint = try MetricsEndpoint(host: "127.0.0.1", port: 0)
        defer { endpoint.stop() }
        #expect(try PlainHTTP.get("/healthz", port: endpoint.port) == ("HTTP/1.1 200 OK", "ok\n"))
        for path in ["/readyz", "/metrics"] {
            let answer = try PlainHTTP.get(path, port: endpoint.port)
            #expect(answer.status == "HTTP/1.1 503 Service Unavailable", "\(path)")
            #expect(answer.body.hasPrefix("starting:"), "\(path): \(answer.body)")
        }
    }

    @Test("a peer that sends nothing, or half a request, is closed at the deadline")
    func deadline() throws {
        let limits = MetricsEndpoint.Limits(maxConnections: 8, maxWaiting: 4, deadline: .milliseconds(300))
        let endpoint = try MetricsEndpoint(host: "127.0.0.1", port: 0, limits: limits)
        defer { endpoint.stop() }
        let silent = try ClientSocket.connect(host: "127.0.0.1", port: endpoint.port)
        defer { silent.close() }
        let slow = try ClientSocket.connect(host: "127.0.0.1", port: endpoint.port)
        defer { slow.close() }
        try slow.write(Array("GET /metrics HTTP/1.1\r\nHost: x".utf8), timeout: .seconds(5))
        let started = ContinuousClock.now
        #expect(Self.closedSilently(silent, within: .seconds(10)))
        #expect(Self.closedSilently(slow, within: .seconds(10)))
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("beyond the waiting connections' cap the oldest is closed, so a probe always gets in")
    func oldestWaitingMakesRoom() throws {
        let limits = MetricsEndpoint.Limits(maxConnections: 64, maxWaiting: 4, deadline: .seconds(60))
        let endpoint = try MetricsEndpoint(host: "127.0.0.1", port: 0, limits: limits)
        defer { endpoint.stop() }
        let idle = try (0..<12).map { _ in try ClientSocket.connect(host: "127.0.0.1", port: endpoint.port) }
        defer { for socket in idle { socket.close() } }
        // Every probe is answered at once, long before the idle connections' deadline.
        for _ in 0..<5 {
            #expect(try PlainHTTP.get("/healthz", port: endpoint.port) == ("HTTP/1.1 200 OK", "ok\n"))
        }
        // The oldest idle connections were closed to make room; the deadline has not closed any.
        #expect(Self.closedSilently(idle[0], within: .seconds(10)))
        #expect(Self.closedSilently(idle[7], within: .seconds(10)))
    }

    @Test("beyond the connection cap a new connection gets 503 at once instead of waiting")
    func connectionCap() throws {
        let limits = MetricsEndpoint.Limits(maxConnections: 3, maxWaiting: 3, deadline: .seconds(60))
        let endpoint = try MetricsEndpoint(host: "127.0.0.1", port: 0, limits: limits)
        defer { endpoint.stop() }
        let idle = try (0..<3).map { _ in try ClientSocket.connect(host: "127.0.0.1", port: endpoint.port) }
        defer { for socket in idle { socket.close() } }
        // The three are accepted in order and hold every slot; the fourth is refused.
        let refused = try ClientSocket.connect(host: "127.0.0.1", port: endpoint.port)
        defer { refused.close() }
        let answer = try PlainHTTP.response(refused)
        #expect(answer.status == "HTTP/1.1 503 Service Unavailable")
        #expect(answer.body == "too many connections to the metrics endpoint\n")
    }
}
