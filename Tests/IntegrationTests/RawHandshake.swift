import HealthCodec
import HealthModel
import HealthPosix
import HealthWire
import TestSupport

/// The client's handshake on a raw socket, for tests that then send bytes of their own: hello, challenge,
/// proof, welcome (whose server signature it checks). Nonces come from a seeded generator.
enum RawHandshake {
    /// Performs the handshake with `token` ("" for none); returns the welcome. Throws the server's refusal.
    static func perform(_ socket: ClientSocket, token: String, name: String, seed: UInt64 = 1) throws -> Welcome {
        var generator = SplitMix64(seed: seed)
        let nonce = (0..<TokenAuthentication.nonceBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var handshake = try ClientHandshake(clientName: name, token: token, nonce: token.isEmpty ? [] : nonce)
        let encoder = FrameEncoder()
        try socket.write(encoder.encode(Message.hello(handshake.hello).frame(requestID: 0)), timeout: .seconds(5))
        var decoder = FrameDecoder()
        while true {
            while let frame = try decoder.next() {
                switch try Message.decode(frame) {
                case .challenge(let challenge):
                    let proof = try handshake.respond(to: challenge, payload: frame.payload)
                    try socket.write(encoder.encode(Message.proof(proof).frame(requestID: 0)), timeout: .seconds(5))
                case .welcome(let welcome):
                    try handshake.check(welcome)
                    return welcome
                case .error(let reply):
                    throw reply.healthError
                default:
                    throw HealthError(.malformedFrame, "unexpected \(frame.kind) in the handshake")
                }
            }
            let bytes = try socket.read(maxBytes: 65_536, timeout: .seconds(10))
            if bytes.isEmpty {
                throw HealthError(.connectionLost, "the server closed the connection during the handshake")
            }
            decoder.append(bytes)
        }
    }
}
