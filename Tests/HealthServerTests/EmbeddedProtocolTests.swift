import HealthCodec
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Hostile input and deadlines through the real connection logic in process (``EmbeddedServer``): each bad
/// input gets its error and the connection is closed, while another connection carries on. What needs the real
/// listener (its connection limit, the memory budget, sockets that reset) is in IntegrationTests'
/// HostileClientTests and AbuseTests.
@Suite("protocol in process")
struct EmbeddedProtocolTests {
    static func errorReply(in messages: [Message]) -> ErrorReply? {
        for message in messages { if case .error(let reply) = message { return reply } }
        return nil
    }

    @Test("garbage, oversized frames, zip bombs and requests before hello get their error; others carry on")
    func hostileInputs() throws {
        let server = try EmbeddedServer(arguments: ["--max-frame-bytes", "1048576"])
        let good = try server.session(name: "well-behaved")
        try good.insert(try StepSamples.steps(subject: "anna", minutes: 10))

        let bomb = Zlib.deflate([UInt8](repeating: 0, count: 256 << 20), level: 9)
        var bombPayload: [UInt8] = []
        withUnsafeBytes(of: UInt32(256 << 20).littleEndian) { bombPayload.append(contentsOf: $0) }
        bombPayload += bomb
        let cases: [(name: String, bytes: [UInt8], hello: Bool, code: ErrorCode)] = [
            ("garbage", Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), false, .malformedFrame),
            ("garbage after hello", Array(repeating: 0xFF, count: 64), true, .malformedFrame),
            (
                "request before hello",
                FrameEncoder().encode(Message.serverInfoQuery(ServerInfoQuery()).frame(requestID: 1)), false,
                .handshakeRequired
            ),
            ("oversized frame", RawFrame.header(kind: 0x10, length: 64 << 20), true, .frameTooLarge),
            (
                "zip bomb", RawFrame.header(kind: 0x10, flags: 1, length: UInt32(bombPayload.count)) + bombPayload,
                true, .inflatedTooLarge
            ),
            ("unknown kind", RawFrame.header(kind: 0x7E, length: 0), true, .unknownMessageKind),
            ("truncated payload", RawFrame.header(kind: 0x13, length: 1) + [0x80], true, .malformedPayload),
            (
                "truncated payload before hello", RawFrame.header(kind: 0x13, length: 1) + [0x80], false,
                .handshakeRequired
            ),
        ]
        for entry in cases {
            let connection = entry.hello ? try server.session(name: "hostile") : server.connect()
            connection.send(entry.bytes)
            let messages = try connection.readMessages()
            let reply = Self.errorReply(in: messages)
            #expect(reply?.code == entry.code.rawValue, "\(entry.name): \(messages)")
            #expect(reply?.closesConnection == true, "\(entry.name)")
            #expect(reply?.retryable == false, "\(entry.name)")
            #expect(connection.isClosed, "\(entry.name): the connection stays open")
            // The well-behaved connection is unaffected.
            let sum = try good.send(StatisticsQuery(subject: "anna", type: "stepCount", options: .cumulativeSum))
            #expect(sum.statistics.figures.sum == 45, "\(entry.name)")
        }
    }

    @Test("an idle connection is closed with idleTimeout")
    func idleTimeout() throws {
        let server = try EmbeddedServer(arguments: ["--idle-timeout", "1"])
        let connection = try server.session()
        #expect(connection.welcome != nil)
        server.advance(by: .milliseconds(999))
        #expect(try connection.readMessages().isEmpty && !connection.isClosed)
        server.advance(by: .milliseconds(1))
        #expect(Self.errorReply(in: try connection.readMessages())?.code == ErrorCode.idleTimeout.rawValue)
        #expect(connection.isClosed)
    }
}
