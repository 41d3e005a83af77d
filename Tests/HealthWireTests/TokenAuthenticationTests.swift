import HealthCodec
import HealthModel
import Testing

@testable import HealthWire

/// The handshake's key derivation and proofs, checked against values computed independently (Python's
/// `hashlib` and `hmac`, script in PROTOCOL.md "Authentication").
@Suite("Token challenge-response")
struct TokenAuthenticationTests {
    @Test("the worked example's keys, proof and signature match an independent computation")
    func workedExample() {
        let salted = AccessToken.saltedToken(secret: Golden.token.secret, salt: Golden.salt)
        #expect(Hex.encode(salted) == "a5a6f131640922a07c67c53bbe31389db1558569ffb88cacdeb834b57ba1831c")
        #expect(
            Hex.encode(TokenAuthentication.clientKey(saltedToken: salted))
                == "70b5f3ac51b4f6edf28272a674058813b505fb8151aaa0f76ff22a4e36b96039")
        #expect(
            Hex.encode(Golden.verifier.storedKey) == "ab7209514e345ebbd96987da2e5c0f1669469f89a3a92c69e251e207ad14d6e6")
        #expect(
            Hex.encode(Golden.verifier.serverKey) == "d69bdbae74ddf9bd1604b9c2bad7d73255e48753f559b40c84e7401348f613e1")
        #expect(
            Hex.encode(Golden.proof.clientProof) == "1f29a8ed4abc85c34d8bcd2de5a74e376f217c25a45926edd87b8a099d7d8b33")
        #expect(
            Hex.encode(Golden.verifier.serverSignature(authMessage: Golden.authMessage))
                == "16d40545b4eb726ec7401a9b3d60dd079bebab3f9fc7e0d22421addf892ef91d")
        #expect(Golden.token.text == "hkd1_00000001_808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
    }

    @Test("the verifier accepts the proof only for the AuthMessage it was made for")
    func verifierBindsTheTranscript() {
        let verifier = Golden.verifier
        #expect(verifier.accepts(proof: Golden.proof.clientProof, authMessage: Golden.authMessage))
        var otherNonce = Golden.challenge
        otherNonce.serverNonce[0] ^= 1
        let replayed = TokenAuthentication.authMessage(
            helloPayload: Golden.handshakeHello.encodedPayload(), challengePayload: otherNonce.encodedPayload())
        #expect(!verifier.accepts(proof: Golden.proof.clientProof, authMessage: replayed))
        var flipped = Golden.proof.clientProof
        flipped[31] ^= 0x80
        #expect(!verifier.accepts(proof: flipped, authMessage: Golden.authMessage))
        #expect(!verifier.accepts(proof: Array(Golden.proof.clientProof.prefix(31)), authMessage: Golden.authMessage))
    }

    @Test("the client handshake sends no secret, answers the challenge and checks the server's signature")
    func clientHandshake() throws {
        var handshake = try ClientHandshake(clientName: "hkq 0.1.0", token: Golden.token.text, nonce: Array(0..<32))
        #expect(handshake.hello == Golden.handshakeHello)
        let proof = try handshake.respond(to: Golden.challenge, payload: Golden.challenge.encodedPayload())
        #expect(proof == Golden.proof)
        let signature = Golden.verifier.serverSignature(authMessage: Golden.authMessage)
        let good = Welcome(
            serverVersion: "hkd", connectionID: 1, identity: "admin", limits: Golden.limits, serverSignature: signature)
        try handshake.check(good)
        var forged = good
        forged.serverSignature[0] ^= 1
        #expect(throws: HealthError.self) { try handshake.check(forged) }
        var unsigned = good
        unsigned.serverSignature = []
        do {
            try handshake.check(unsigned)
            Issue.record("an unsigned welcome was accepted")
        } catch {
            #expect(error.code == .serverUnverified)
        }
        // A welcome without any challenge, to a client with a token: refused.
        let fresh = try ClientHandshake(clientName: "hkq", token: Golden.token.text, nonce: Array(0..<32))
        do {
            try fresh.check(good)
            Issue.record("a welcome without challenge was accepted")
        } catch {
            #expect(error.code == .serverUnverified)
            #expect(
                error.message.hasPrefix("the server accepted the connection without proving that it knows the token"))
        }
    }

    @Test("malformed tokens are refused before anything is sent; no token means token id 0 and no nonce")
    func tokenShapes() throws {
        for bad in [
            "nonsense", "hkd1_00000000_" + String(repeating: "ab", count: 32), String(Golden.token.text.dropLast()),
        ] {
            do {
                _ = try ClientHandshake(clientName: "hkq", token: bad, nonce: Array(0..<32))
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(error.code == .unauthenticated)
            }
        }
        let anonymous = try ClientHandshake(clientName: "hkq", token: "", nonce: [])
        #expect(anonymous.hello.tokenID == 0 && anonymous.hello.clientNonce.isEmpty)
    }

    @Test("a hello of protocol version 1 decodes to its version only, so the server can say unsupportedVersion")
    func oldHello() throws {
        var w = ByteWriter()
        w.write(UInt8(1))
        w.writeString("old hkq")
        w.writeString("hkd1_00000001_" + String(repeating: "ab", count: 32))
        let hello = try Hello(payload: w.bytes)
        #expect(hello.protocolVersion == 1)
    }
}
