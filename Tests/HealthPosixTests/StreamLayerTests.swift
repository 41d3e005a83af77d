import HealthPosix
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A toy layer: XOR with a key both ways; the byte `0xFF` from the peer (0xFF ^ key on the wire) fails the
/// stream after an answer of `BYE`; closing sends `END`.
final class XORLayer: StreamLayer {
    static let key: UInt8 = 0x5A

    func received(_ bytes: UnsafeRawBufferPointer, into output: inout StreamLayerOutput) {
        for byte in bytes {
            let plain = byte ^ Self.key
            if plain == 0xFF {
                output.forPeer += Array("BYE".utf8)
                output.failure = "the peer sent 0xFF"
                return
            }
            output.forHandler.append(plain)
        }
    }

    func send(_ bytes: UnsafeRawBufferPointer, into output: inout StreamLayerOutput) {
        output.forPeer += bytes.map { $0 ^ Self.key }
    }

    func finish(into output: inout StreamLayerOutput) { output.forPeer += Array("END".utf8) }
}

@Suite("Connection with a StreamLayer")
struct StreamLayerTests {
    static func server(_ group: EventLoopGroup, log: HandlerLog) throws -> TCPServer {
        try TCPServer.start(group: group, configuration: .init()) { connection in
            connection.install(XORLayer())
            return EchoHandler(log: log)
        }
    }

    @Test("bytes pass through the layer both ways: the handler echoes plaintext, the socket carries the layer's bytes")
    func throughTheLayer() async throws {
        let group = try EventLoopGroup(threads: 1, name: "layer")
        defer { group.shutdown() }
        let log = HandlerLog()
        let server = try Self.server(group, log: log)
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        defer { socket.close() }
        let message = patternBytes(100_000, seed: 7).map { $0 == 0xFF ? 0 : $0 }
        try socket.write(message.map { $0 ^ XORLayer.key }, timeout: .seconds(5))
        // The echo went through the layer twice: decoded on the way in, encoded on the way out.
        let echoed = try readBytes(socket, count: message.count, timeout: .seconds(5))
        #expect(echoed == message.map { $0 ^ XORLayer.key })
    }

    @Test("a layer's failure sends its last bytes, then closes with the reason as the handler's error")
    func failure() async throws {
        let group = try EventLoopGroup(threads: 1, name: "layer")
        defer { group.shutdown() }
        let log = HandlerLog()
        let server = try Self.server(group, log: log)
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        defer { socket.close() }
        try socket.write([0x41 ^ XORLayer.key, 0xFF ^ XORLayer.key], timeout: .seconds(5))
        // What the layer produced while receiving (BYE) goes out before the handler's echo of "A" it carried;
        // then end of stream, though our side never closed.
        let answer = try readBytes(socket, count: 4, timeout: .seconds(5))
        #expect(answer == Array("BYE".utf8) + [0x41 ^ XORLayer.key])
        #expect(try socket.read(maxBytes: 16, timeout: .seconds(5)).isEmpty)
        socket.close()
        #expect(await eventually { log.closeCount == 1 })
        let error = log.read { $0.closes.first ?? nil }
        #expect(error?.message == "the peer sent 0xFF", "\(String(describing: error))")
    }
}
