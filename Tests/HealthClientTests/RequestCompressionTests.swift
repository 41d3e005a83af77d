import HealthWire
import Testing

@testable import HealthClient

/// Request payloads are deflated unless the configuration says not to (hkq over loopback); then only a payload
/// too large for the frame limit is.
@Suite struct RequestCompressionTests {
    /// A payload that deflates well: 64 KiB of a repeating pattern.
    let payload = (0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 % 7) }

    /// Whether the encoded frame has the `compressed` flag (byte 4 of the header).
    func isCompressed(_ encoder: FrameEncoder, _ payload: [UInt8]) -> Bool {
        let bytes = encoder.encode(Frame(kind: .insert, requestID: 1, payload: payload))
        return FrameFlags(rawValue: bytes[4]).contains(.compressed)
    }

    @Test func requestsAreDeflatedByDefaultAndLoopbackHostsAreKnown() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1"] {
            #expect(ClientConfiguration.isLoopback(host), "\(host)")
            #expect(ClientConfiguration(host: host).compressesRequests, "\(host)")
        }
        for host in ["10.0.0.7", "db.example.org", "::2", "128.0.0.1"] {
            #expect(!ClientConfiguration.isLoopback(host), "\(host)")
        }
    }

    @Test func remoteRequestsAreDeflated() {
        let encoder = HealthConnection.requestEncoder(ClientConfiguration(host: "db.example.org"), limits: .standard)
        #expect(isCompressed(encoder, payload))
    }

    @Test func loopbackRequestsAreDeflatedOnlyWhenTooLargeOtherwise() {
        let limits = FrameLimits(maxFrameBytes: 32 << 10, maxInflatedBytes: 1 << 20)
        var configuration = ClientConfiguration(host: "127.0.0.1")
        configuration.compressesRequests = false
        let encoder = HealthConnection.requestEncoder(configuration, limits: limits)
        #expect(!isCompressed(encoder, Array(payload[0..<(32 << 10)])))
        #expect(isCompressed(encoder, payload))
    }
}
