import Foundation
import HealthClient
import HealthCodec
import HealthModel
import HealthPosix
import HealthServer
import HealthWire
import TestSupport
import Testing

/// What a fake server on hkd's port learns from hkq and HealthClient (nothing that logs in), how clients
/// refuse servers that cannot prove they hold the token's verifier, `--auth off`, and the warning for a
/// non-loopback listen address.
@Suite("handshake security", .serialized)
struct HandshakeSecurityTests {
    /// Everything derived from `token` that would let someone log in or that identifies it: its text, its
    /// secret (raw and hex), and under the identity's real salt the salted token (format 1's stored hash),
    /// ClientKey, StoredKey and ServerKey.
    static func secrets(of token: String, salt: [UInt8]) throws -> [(String, [UInt8])] {
        let parsed = try #require(AccessToken(token))
        let salted = AccessToken.saltedToken(secret: parsed.secret, salt: salt)
        let verifier = TokenVerifier(saltedToken: salted)
        return [
            ("token text", Array(token.utf8)), ("secret", parsed.secret),
            ("secret hex", Array(Hex.encode(parsed.secret).utf8)),
            ("stored hash (salted token)", salted), ("ClientKey", TokenAuthentication.clientKey(saltedToken: salted)),
            ("StoredKey", verifier.storedKey), ("ServerKey", verifier.serverKey),
        ]
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    /// The real salt of token id `id`: anyone may learn it by sending a hello (it is not secret).
    static func realSalt(port: Int, id: UInt32) throws -> [UInt8] {
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        defer { socket.close() }
        let hello = Hello(clientName: "probe", tokenID: id, clientNonce: Array(repeating: 7, count: 32))
        try socket.write(FrameEncoder().encode(Message.hello(hello).frame(requestID: 0)), timeout: .seconds(5))
        var decoder = FrameDecoder()
        while true {
            if let frame = try decoder.next(), case .challenge(let challenge) = try Message.decode(frame) {
                return challenge.salt
            }
            let bytes = try socket.read(maxBytes: 65_536, timeout: .seconds(10))
            if bytes.isEmpty { throw HealthError(.connectionLost, "no challenge") }
            decoder.append(bytes)
        }
    }

    /// Replays the recorded client frames (hello, then proof) to the real server, answering nothing itself;
    /// returns the server's last reply.
    static func replay(_ frames: [Frame], port: Int) throws -> Message? {
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        defer { socket.close() }
        var decoder = FrameDecoder()
        var last: Message?
        for frame in frames {
            try socket.write(FrameEncoder().encode(frame), timeout: .seconds(5))
            var got: Message?
            while got == nil {
                if let reply = try decoder.next() {
                    got = try Message.decode(reply)
                    break
                }
                let bytes = try socket.read(maxBytes: 65_536, timeout: .seconds(15))
                if bytes.isEmpty { return last }
                decoder.append(bytes)
            }
            last = got
        }
        return last
    }

    static func assertLearnsNothing(_ received: [UInt8], token: String, salt: [UInt8]) throws {
        #expect(!received.isEmpty, "the fake listener received nothing")
        for (name, bytes) in try secrets(of: token, salt: salt) {
            let found = contains(received, bytes)
            #expect(!found, "the fake listener received the \(name)")
        }
    }

    @Test(
        "a fake listener given the real salt gets a hello and a proof: no token, nothing derived, nothing that replays")
    func fakeListenerLearnsNothing() async throws {
        let hkd = try await TestServer()
        let salt = try Self.realSalt(port: hkd.port, id: 1)
        let fake = try FakeListener(.challenge(salt: salt))
        let client = HealthClient(ClientConfiguration(port: fake.port, token: hkd.token, retry: .none))
        defer { client.close() }
        do {
            try await client.connect()
            Issue.record("the client accepted the fake server")
        } catch {
            #expect(error.code == .serverUnverified)
            #expect(error.message.hasPrefix("the server's signature is wrong"), "\(error.message)")
        }
        let frames = try fake.framesReceived()
        #expect(
            frames.map(\.kind) == [.hello, .proof], "the client sent more than hello and proof: \(frames.map(\.kind))")
        try Self.assertLearnsNothing(fake.bytesReceived(), token: hkd.token, salt: salt)
        // Replaying what the fake got to the real server fails: its nonce is new, the proof binds it.
        let reply = try Self.replay(frames, port: hkd.port)
        #expect(
            reply
                == .error(
                    ErrorReply(code: 300, retryable: false, closesConnection: true, message: "the token is not valid")))
        // The real server accepts the same client.
        let real = hkd.client()
        defer { real.close() }
        try await real.ping()
        await hkd.stop()
    }

    @Test("a fake listener that welcomes at once is refused before anything but hello is sent")
    func welcomeWithoutProofIsRefused() async throws {
        let hkd = try await TestServer()
        let fake = try FakeListener(.welcomeAtOnce)
        let client = HealthClient(ClientConfiguration(port: fake.port, token: hkd.token, retry: .none))
        defer { client.close() }
        do {
            _ = try await client.serverInfo()
            Issue.record("the client accepted a server that proved nothing")
        } catch {
            #expect(error.code == .serverUnverified)
            #expect(error.code.rawValue == 303)
        }
        #expect(try fake.framesReceived().map(\.kind) == [.hello])
        try Self.assertLearnsNothing(
            fake.bytesReceived(), token: hkd.token, salt: try Self.realSalt(port: hkd.port, id: 1))
        await hkd.stop()
    }

    @Test("hkq with the auto-discovered ./hkd-data/admin.token gives a fake listener nothing and says why it stopped")
    func hkqAutoDiscoveredToken() async throws {
        let hkd = try await TestServer()
        let salt = try Self.realSalt(port: hkd.port, id: 1)
        for behaviour in [FakeListener.Behaviour.challenge(salt: salt), .welcomeAtOnce] {
            let fake = try FakeListener(behaviour)
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("hkq-cwd-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: work.appendingPathComponent("hkd-data"), withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let tokenPath = work.appendingPathComponent("hkd-data/admin.token").path
            // Not atomically: on Linux that leaves a /tmp/TemporaryDirectory.* behind.
            try (hkd.token + "\n").write(toFile: tokenPath, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tokenPath)
            let hkq = try await runChild(
                try TestServer.binary("hkq").path, ["--server", "127.0.0.1:\(fake.port)", "server-info"],
                currentDirectory: work.path)
            let err = hkq.errors
            #expect(hkq.status != 0)
            #expect(err.contains("(303)") || err.contains("serverUnverified"), "\(err)")
            #expect(
                err.contains("the server's signature is wrong")
                    || err.contains("without proving that it knows the token"), "\(err)")
            try Self.assertLearnsNothing(fake.bytesReceived(), token: hkd.token, salt: salt)
        }
        await hkd.stop()
    }

    @Test("--auth off: a client without a token is served; one holding a token refuses the unproven server")
    func authOff() async throws {
        let hkd = try await TestServer(arguments: ["--auth", "off"])
        #expect(hkd.token.isEmpty)
        let anonymous = HealthClient(ClientConfiguration(port: hkd.port, retry: .none))
        defer { anonymous.close() }
        #expect(try await anonymous.serverInfo().serverVersion == "hkd 0.1.0")
        let holder = HealthClient(
            ClientConfiguration(
                port: hkd.port, token: AccessToken(identityID: 1, secret: Array(repeating: 1, count: 32)).text,
                retry: .none))
        defer { holder.close() }
        do {
            try await holder.connect()
            Issue.record("a token was used with a server that proved nothing")
        } catch {
            #expect(error.code == .serverUnverified)
            #expect(error.message.contains("--auth off"), "\(error.message)")
        }
        await hkd.stop()
    }

    @Test("hkd warns at start when it listens on a non-loopback address, and not on loopback")
    func nonLoopbackWarning() async throws {
        let open = try await TestServer(host: "0.0.0.0")
        // TestServer returns once hkd logged "listening on 0.0.0.0:PORT"; the warning is logged before it.
        #expect(
            open.logText.contains(
                "hkd[warning] listening on 0.0.0.0, not a loopback address: anyone who can reach port \(open.port) can connect"
            ),
            "\(open.logText)")
        let local = try await TestServer()
        #expect(!local.logText.contains("not a loopback address"))
        await open.stop()
        await local.stop()
    }

    @Test("loopback addresses are told apart from the rest")
    func loopbackClassification() {
        for host in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] {
            #expect(ServerConfiguration.isLoopback(host), "\(host)")
        }
        for host in ["0.0.0.0", "192.168.1.5", "::", "127.0.0.1.example.com", "1270.0.0.1"] {
            #expect(!ServerConfiguration.isLoopback(host), "\(host)")
        }
    }
}
