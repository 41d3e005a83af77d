import Foundation
import HealthClient
import HealthCodec
import HealthModel
import HealthPosix
import HealthWire
import TestSupport
import Testing

/// Clients that send garbage, oversized frames, zip bombs or nothing at all: each gets its error and is
/// disconnected, and the server keeps serving everyone else.
@Suite("hostile clients", .serialized)
struct HostileClientTests {
    /// Sends `bytes` on a raw connection and returns every frame the server sends before closing.
    static func exchange(_ bytes: [UInt8], port: Int, hello: Bool, token: String = "") throws -> [Message] {
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        defer { socket.close() }
        var messages: [Message] = []
        if hello { messages.append(.welcome(try RawHandshake.perform(socket, token: token, name: "hostile"))) }
        try socket.write(bytes, timeout: .seconds(5))
        var decoder = FrameDecoder()
        while true {
            let chunk = try socket.read(maxBytes: 65_536, timeout: .seconds(10))
            if chunk.isEmpty { return messages }
            decoder.append(chunk)
            while let frame = try decoder.next() { messages.append(try Message.decode(frame)) }
        }
    }

    static func errorReply(in messages: [Message]) -> ErrorReply? {
        for message in messages { if case .error(let reply) = message { return reply } }
        return nil
    }

    static func header(kind: UInt8, flags: UInt8 = 0, length: UInt32) -> [UInt8] {
        var bytes: [UInt8] = [0x48, 0x4B, 1, kind, flags, 0, 0, 0, 7, 0, 0, 0]
        withUnsafeBytes(of: length.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    @Test("garbage, oversized frames, zip bombs and requests before hello get their error; others carry on")
    func hostileInputs() async throws {
        let hkd = try await TestServer(arguments: ["--max-frame-bytes", "1048576"])
        let good = hkd.client(name: "well-behaved")
        defer { good.close() }
        _ = try await good.insert(try EndToEndTests.steps(subject: "anna", minutes: 10))

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
            ("oversized frame", Self.header(kind: 0x10, length: 64 << 20), true, .frameTooLarge),
            (
                "zip bomb", Self.header(kind: 0x10, flags: 1, length: UInt32(bombPayload.count)) + bombPayload, true,
                .inflatedTooLarge
            ),
            ("unknown kind", Self.header(kind: 0x7E, length: 0), true, .unknownMessageKind),
            ("truncated payload", Self.header(kind: 0x13, length: 1) + [0x80], true, .malformedPayload),
            ("truncated payload before hello", Self.header(kind: 0x13, length: 1) + [0x80], false, .handshakeRequired),
        ]
        for entry in cases {
            let messages = try Self.exchange(entry.bytes, port: hkd.port, hello: entry.hello, token: hkd.token)
            let reply = Self.errorReply(in: messages)
            #expect(reply?.code == entry.code.rawValue, "\(entry.name): \(messages)")
            #expect(reply?.closesConnection == true, "\(entry.name)")
            #expect(reply?.retryable == false, "\(entry.name)")
            // The well-behaved client is unaffected.
            #expect(
                try await good.statistics("stepCount", subject: "anna", options: .cumulativeSum)?.statistics.figures.sum
                    == 45)
        }
        #expect(hkd.isRunning)
        let info = try await good.serverInfo()
        #expect(info.residentBytes < 512 << 20, "the zip bomb must not have been inflated")
        await hkd.stop()
    }

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

    @Test("an idle connection is closed with idleTimeout")
    func idleTimeout() async throws {
        let hkd = try await TestServer(arguments: ["--idle-timeout", "1"])
        let messages = try Self.exchange([], port: hkd.port, hello: true, token: hkd.token)
        #expect(messages.contains { if case .welcome = $0 { true } else { false } })
        #expect(Self.errorReply(in: messages)?.code == ErrorCode.idleTimeout.rawValue)
        await hkd.stop()
    }
}
