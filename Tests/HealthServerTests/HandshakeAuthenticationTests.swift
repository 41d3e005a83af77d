import Foundation
import HealthCodec
import HealthModel
import HealthWire
import Synchronization
import TestSupport
import Testing

@testable import HealthServer

/// The challenge-response handshake through the state machine, against a real identity registry in a
/// temporary directory, with seeded server nonces.
@Suite("Handshake authentication")
struct HandshakeAuthenticationTests {
    /// Nonces from a seeded generator (the low byte of each ``SplitMix64`` value), one stream per authenticator.
    final class SeededBytes: Sendable {
        private let random: Mutex<SplitMix64>
        init(seed: UInt64) { random = Mutex(SplitMix64(seed: seed)) }
        func next(_ count: Int) -> [UInt8] {
            random.withLock { random in (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        }
    }

    struct Fixture {
        /// Removed with the fixture's last copy.
        let scratch: TestDirectory
        var directory: String { scratch.path }
        let registry: IdentityRegistry
        let adminToken: String
        let authenticator: TokenAuthenticator

        init(seed: UInt64 = 1) throws {
            scratch = try TestDirectory(prefix: "hkd-auth")
            let directory = scratch.path
            registry = try IdentityRegistry.open(directory: directory) { _ in }
            adminToken = try String(contentsOfFile: directory + "/admin.token", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let bytes = SeededBytes(seed: seed)
            authenticator = TokenAuthenticator(registry: registry) { bytes.next($0) }
        }

        func machine() -> ConnectionStateMachine {
            ConnectionStateMachine(
                limits: ConnectionStateMachineTests.limits, serverVersion: "hkd test", connectionID: 3,
                authenticator: authenticator)
        }
    }

    static let nonce: [UInt8] = Array(100..<132)

    /// The code of an error message, `nil` for anything else.
    static func errorCode(_ message: Message?) -> UInt16? {
        if case .error(let reply) = message { return reply.code }
        return nil
    }

    /// Sends `message` and returns the messages written back, and whether the machine closed.
    static func send(_ message: Message, to machine: inout ConnectionStateMachine) throws -> ([Message], Bool) {
        let actions = machine.received(ConnectionStateMachineTests.bytes(message, id: 0))
        return (try ConnectionStateMachineTests.written(actions), ConnectionStateMachineTests.closes(actions))
    }

    /// Runs hello and proof for `token`; returns the final reply, the challenge, and the client's handshake.
    static func handshake(_ token: String, on machine: inout ConnectionStateMachine) throws -> (
        Message?, Challenge?, ClientHandshake
    ) {
        var client = try ClientHandshake(clientName: "test", token: token, nonce: nonce)
        let (first, _) = try send(.hello(client.hello), to: &machine)
        guard case .challenge(let challenge) = first.first else { return (first.first, nil, client) }
        let proof = try client.respond(to: challenge, payload: challenge.encodedPayload())
        let (second, _) = try send(.proof(proof), to: &machine)
        return (second.first, challenge, client)
    }

    @Test("hello → challenge → proof → welcome whose signature the client accepts; the token never crosses")
    func success() throws {
        let fixture = try Fixture()
        var machine = fixture.machine()
        let (reply, challenge, client) = try Self.handshake(fixture.adminToken, on: &machine)
        guard case .welcome(let welcome) = reply else {
            Issue.record("no welcome: \(String(describing: reply))")
            return
        }
        #expect(welcome.identity == "admin")
        #expect(welcome.serverSignature.count == 32)
        try client.check(welcome)
        #expect(challenge?.salt.count == 16)
        #expect(!machine.isClosed)
        // Requests are dispatched as that identity now.
        let actions = machine.received(ConnectionStateMachineTests.bytes(.serverInfoQuery(ServerInfoQuery()), id: 4))
        guard case .dispatch(_, _, let identity) = actions.first else {
            Issue.record("not dispatched: \(actions)")
            return
        }
        #expect(identity == ClientIdentity(name: "admin", id: 1))
    }

    @Test("a wrong token, an unknown id and a replayed proof all get unauthenticated at the proof")
    func refusals() throws {
        let fixture = try Fixture()
        let admin = try #require(AccessToken(fixture.adminToken))
        var wrongSecret = admin
        wrongSecret.secret[0] ^= 1
        let unknown = AccessToken(identityID: 77, secret: admin.secret)
        for token in [wrongSecret.text, unknown.text] {
            var machine = fixture.machine()
            let (reply, challenge, _) = try Self.handshake(token, on: &machine)
            #expect(challenge != nil, "no challenge for \(token.prefix(14))")
            #expect(
                reply
                    == .error(
                        ErrorReply(
                            code: 300, retryable: false, closesConnection: true, message: "the token is not valid")))
            #expect(machine.isClosed)
        }
        // Replay: the proof of one connection, sent on another (its server nonce differs).
        var first = fixture.machine()
        var client = try ClientHandshake(clientName: "test", token: fixture.adminToken, nonce: Self.nonce)
        let (challenged, _) = try Self.send(.hello(client.hello), to: &first)
        guard case .challenge(let challenge) = challenged.first else {
            Issue.record("no challenge")
            return
        }
        let proof = try client.respond(to: challenge, payload: challenge.encodedPayload())
        var second = fixture.machine()
        let (again, _) = try Self.send(.hello(client.hello), to: &second)
        guard case .challenge(let otherChallenge) = again.first else {
            Issue.record("no second challenge")
            return
        }
        #expect(otherChallenge.serverNonce != challenge.serverNonce)
        let (replayed, closed) = try Self.send(.proof(proof), to: &second)
        #expect(Self.errorCode(replayed.first) == ErrorCode.unauthenticated.rawValue)
        #expect(closed)
    }

    @Test("an unknown id is challenged like a known one: a 16-byte salt, the same at every attempt")
    func noEnumeration() throws {
        let fixture = try Fixture()
        func challenge(_ id: UInt32) throws -> Challenge? {
            var machine = fixture.machine()
            let (reply, _) = try Self.send(
                .hello(Hello(clientName: "probe", tokenID: id, clientNonce: Self.nonce)), to: &machine)
            if case .challenge(let c) = reply.first { return c }
            return nil
        }
        let known = try #require(try challenge(1))
        let unknown = try #require(try challenge(4242))
        #expect(unknown.salt.count == known.salt.count)
        #expect(try challenge(4242)?.salt == unknown.salt)
        #expect(try challenge(4243)?.salt != unknown.salt)
        #expect(try challenge(1)?.salt == known.salt)
    }

    @Test(
        "a revoked identity's correct proof gets tokenRevoked; no token gets unauthenticated; anything but proof after challenge is refused"
    )
    func revokedMissingAndOutOfOrder() throws {
        let fixture = try Fixture()
        let created = try fixture.registry.perform(
            .create(IdentitySpec(name: "writer", grants: [TypeGrant(type: "*", share: true, read: false)])))
        let token = created.token
        #expect(!token.isEmpty)
        _ = try fixture.registry.perform(.revoke(name: "writer"))
        var machine = fixture.machine()
        let (reply, _, _) = try Self.handshake(token, on: &machine)
        #expect(
            reply
                == .error(
                    ErrorReply(
                        code: 302, retryable: false, closesConnection: true,
                        message: "the identity \"writer\" was revoked")))

        var anonymous = fixture.machine()
        let (refused, closed) = try Self.send(
            .hello(Hello(clientName: "test", tokenID: 0, clientNonce: [])), to: &anonymous)
        #expect(
            refused.first
                == .error(
                    ErrorReply(
                        code: 300, retryable: false, closesConnection: true,
                        message: "this server requires a token (hkq --token or HKQ_TOKEN)")))
        #expect(closed)

        var early = fixture.machine()
        let client = try ClientHandshake(clientName: "test", token: fixture.adminToken, nonce: Self.nonce)
        _ = try Self.send(.hello(client.hello), to: &early)
        let (out, shut) = try Self.send(.serverInfoQuery(ServerInfoQuery()), to: &early)
        #expect(Self.errorCode(out.first) == ErrorCode.handshakeRequired.rawValue)
        #expect(shut)
    }

    @Test("a hello of protocol version 1 gets unsupportedVersion naming both versions")
    func oldClient() throws {
        let fixture = try Fixture()
        var machine = fixture.machine()
        var w = ByteWriter()
        w.write(UInt8(1))
        w.writeString("old hkq")
        w.writeString(fixture.adminToken)
        let frame = Frame(kind: .hello, flags: [], requestID: 0, payload: w.bytes)
        let actions = machine.received(FrameEncoder().encode(frame))
        #expect(
            try ConnectionStateMachineTests.written(actions).first
                == .error(
                    ErrorReply(
                        code: 101, retryable: false, closesConnection: true,
                        message: "protocol version 1 is not supported; this server speaks 2")))
    }

    @Test("an identity file of format 1 is converted at open: token hashes become verifiers, old tokens still work")
    func migration() throws {
        let scratch = try TestDirectory(prefix: "hkd-auth")
        let directory = scratch.path
        let salt: [UInt8] = Array(1...16)
        let token = AccessToken(identityID: 1, secret: Array(repeating: 0x5a, count: 32))
        let hash = Hex.encode(SHA256.hash(salt + token.secret))
        let old = """
            {"format": 1, "nextID": 2, "identities": [{"id": 1, "name": "admin", "subjects": [], "grants": [{"type": "*", "share": true, "read": true}],
            "admin": true, "createdAt": 1700000000000000, "revoked": false, "salt": "\(Hex.encode(salt))", "tokenHash": "\(hash)"}]}
            """
        // Not atomically: on Linux that leaves a /tmp/TemporaryDirectory.* behind.
        try old.write(toFile: directory + "/identities.json", atomically: false, encoding: .utf8)
        var logged: [String] = []
        let registry = try IdentityRegistry.open(directory: directory) { logged.append($0) }
        #expect(
            logged == ["converted \(directory)/identities.json to format 2: 1 token hashes became handshake verifiers"])
        let text = try String(contentsOfFile: directory + "/identities.json", encoding: .utf8)
        #expect(text.contains("\"format\" : 2"))
        #expect(!text.contains("tokenHash") && !text.contains(hash))
        #expect(text.contains("storedKey") && text.contains("serverKey") && text.contains("unknownSaltKey"))
        var machine = ConnectionStateMachine(
            limits: ConnectionStateMachineTests.limits, serverVersion: "hkd test", connectionID: 1,
            authenticator: TokenAuthenticator(registry: registry) { SeededBytes(seed: 9).next($0) })
        let (reply, _, client) = try Self.handshake(token.text, on: &machine)
        guard case .welcome(let welcome) = reply else {
            Issue.record("the old token no longer works: \(String(describing: reply))")
            return
        }
        try client.check(welcome)
        // Opening again reads format 2 as it is.
        logged = []
        _ = try IdentityRegistry.open(directory: directory) { logged.append($0) }
        #expect(logged.isEmpty)
        withExtendedLifetime(scratch) {}
    }
}
