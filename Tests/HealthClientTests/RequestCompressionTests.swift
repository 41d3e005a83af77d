import HealthWire
import Testing

@testable import HealthClient

/// Request payloads are deflated except over loopback, where only a payload too large for the frame limit is.
@Suite struct RequestCompressionTests {
    /// A payload that deflates well: 64 KiB of a repeating pattern.
    let payload = (0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 % 7) }

    /// Whether the encoded frame has the `compressed` flag (byte 4 of the header).
    func isCompressed(_ encoder: FrameEncoder, _ payload: [UInt8]) -> Bool {
        let bytes = encoder.encode(Frame(kind: .insert, requestID: 1, payload: payload))
        return FrameFlags(rawValue: bytes[4]).contains(.compressed)
    }

    @Test func loopbackHostsSendUncompressedByDefault() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1"] {
            #expect(!ClientConfiguration(host: host).deflatesRequests, "\(host)")
        }
        for host in ["10.0.0.7", "db.example.org", "::2", "128.0.0.1"] {
            #expect(ClientConfiguration(host: host).deflatesRequests, "\(host)")
        }
        var forced = ClientConfiguration(host: "127.0.0.1")
        forced.compressesRequests = true
        #expect(forced.deflatesRequests)
        var plain = ClientConfiguration(host: "db.example.org")
        plain.compressesRequests = false
        #expect(!plain.deflatesRequests)
    }

    @Test func remoteRequestsAreDeflated() {
        let encoder = HealthConnection.requestEncoder(ClientConfiguration(host: "db.example.org"), limits: .standard)
        #expect(isCompressed(encoder, payload))
    }

    @Test func loopbackRequestsAreDeflatedOnlyWhenTooLargeOtherwise() {
        let limits = FrameLimits(maxFrameBytes: 32 << 10, maxInflatedBytes: 1 << 20)
        let encoder = HealthConnection.requestEncoder(ClientConfiguration(host: "127.0.0.1"), limits: limits)
        #expect(!isCompressed(encoder, Array(payload[0..<(32 << 10)])))
        #expect(isCompressed(encoder, payload))
    }
}
