import HealthWire
import Testing

@testable import HealthClient

@Suite("Client connection state machine")
struct ClientConnectionStateMachineTests {
    /// Waiters and subscribers are names here: the actions say whom the machine answers.
    typealias Machine = ClientConnectionStateMachine<String, String>

    static let start = ContinuousClock.now
    static let configuration = ClientConfiguration(
        host: "db.example.org", port: 7420, clientName: "tester", requestTimeout: .seconds(10),
        heartbeat: .seconds(15))
    static let limits = SessionLimits(
        maxFrameBytes: 1 << 20, maxInflatedBytes: 4 << 20, maxBatchRows: 1000, maxPipelinedRequests: 8,
        idleTimeoutSeconds: 300)
    static let welcome = Welcome(serverVersion: "hkd test", connectionID: 9, identity: "tester", limits: limits)

    static func bytes(_ message: Message, id: UInt32, flags: FrameFlags = []) -> [UInt8] {
        FrameEncoder().encode(message.frame(requestID: id, flags: flags))
    }

    /// A machine past the handshake at ``start``.
    static func established(_ configuration: ClientConfiguration = configuration) -> Machine {
        var machine = Machine(configuration, nonce: [])
        _ = machine.connected()
        _ = machine.received(bytes(.welcome(welcome), id: 0), now: start)
        return machine
    }

    /// Sends `message` for `waiter` at `now`; returns the request id it went out under.
    static func send(
        _ message: Message, _ waiter: String, subscriber: String? = nil, on machine: inout Machine,
        at now: ContinuousClock.Instant = start
    ) throws -> UInt32 {
        let actions = machine.request(message, waiter: waiter, subscriber: subscriber, now: now)
        guard case .send(let sent, let id)? = actions.first, actions.count == 1, sent == message else {
            throw HealthError(.internalError, "not sent: \(actions)")
        }
        return id
    }

    static let info = Message.serverInfoQuery(ServerInfoQuery())
    static func pong(_ nonce: UInt64) -> Message { .pong(Pong(nonce: nonce)) }

    /// The error that ended the connection, if `actions` end with closing it.
    static func closing(_ actions: [Machine.Action]) -> HealthClientError? {
        guard case .close(let error)? = actions.last else { return nil }
        return error
    }

    @Test("hello, then welcome: the connection is established with the server's limits")
    func handshake() {
        var machine = Machine(Self.configuration, nonce: [])
        let hello = Hello(clientName: "tester", tokenID: 0, clientNonce: [])
        #expect(machine.connected() == [.send(.hello(hello), requestID: 0)])
        #expect(machine.welcome == nil)
        #expect(machine.received(Self.bytes(.welcome(Self.welcome), id: 0), now: Self.start).isEmpty)
        #expect(machine.welcome == Self.welcome)
        #expect(machine.decoder.limits == Self.limits.frameLimits)
    }

    @Test("a token's challenge is answered with a proof; the welcome must carry the server's signature")
    func tokenHandshake() throws {
        let token = AccessToken(identityID: 7, secret: (0..<32).map { UInt8($0) })
        var configuration = Self.configuration
        configuration.token = token.text
        let nonce = [UInt8](repeating: 0xA5, count: TokenAuthentication.nonceBytes)
        let challenge = Challenge(
            serverNonce: [UInt8](repeating: 0x5A, count: 32), salt: [UInt8](repeating: 3, count: 16))
        let verifier = TokenVerifier(saltedToken: AccessToken.saltedToken(secret: token.secret, salt: challenge.salt))
        let authMessage = TokenAuthentication.authMessage(
            helloPayload: Hello(clientName: "tester", tokenID: 7, clientNonce: nonce).encodedPayload(),
            challengePayload: challenge.encodedPayload())

        for signed in [true, false] {
            var machine = Machine(configuration, nonce: nonce)
            guard case .send(.hello(let hello), 0)? = machine.connected().first else {
                Issue.record("no hello")
                return
            }
            #expect(hello.tokenID == 7 && hello.clientNonce == nonce)
            let answer = machine.received(Self.bytes(.challenge(challenge), id: 0), now: Self.start)
            guard case .send(.proof(let proof), 0)? = answer.first, answer.count == 1 else {
                Issue.record("no proof in \(answer)")
                return
            }
            #expect(verifier.accepts(proof: proof.clientProof, authMessage: authMessage))
            var welcome = Self.welcome
            welcome.serverSignature =
                signed ? verifier.serverSignature(authMessage: authMessage) : [UInt8](repeating: 0, count: 32)
            let actions = machine.received(Self.bytes(.welcome(welcome), id: 0), now: Self.start)
            if signed {
                #expect(actions.isEmpty)
                #expect(machine.welcome == welcome)
            } else {
                #expect(Self.closing(actions)?.code == .serverUnverified)
                #expect(machine.isClosed)
            }
        }
    }

    @Test("a refused handshake ends the connection with the server's error; so does a TLS record or a close")
    func refusedHandshake() throws {
        var machine = Machine(Self.configuration, nonce: [])
        _ = machine.connected()
        let refusal = HealthError(.unauthenticated, "the token is not valid")
        let actions = machine.received(Self.bytes(.error(ErrorReply(refusal)), id: 0), now: Self.start)
        #expect(actions == [.close(HealthClientError(.server, refusal))])
        #expect(
            machine.request(Self.info, waiter: "late", now: Self.start) == [
                .fail("late", HealthClientError(.server, refusal))
            ])

        var tls = Machine(Self.configuration, nonce: [])
        _ = tls.connected()
        let alert = Self.closing(tls.received([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46], now: Self.start))
        #expect(alert?.code == .tlsRequired && alert?.origin == .local)
        #expect(alert?.message.contains("db.example.org:7420 speaks TLS") == true)

        var closed = Machine(Self.configuration, nonce: [])
        _ = closed.connected()
        #expect(Self.closing(closed.peerClosed())?.message == "the server closed the connection during the handshake")
    }

    @Test("replies arriving out of order, one streamed, reach their own requests, even a byte at a time")
    func outOfOrderReplies() throws {
        var machine = Self.established()
        let a = try Self.send(.ping(Ping(nonce: 1)), "a", on: &machine)
        let b = try Self.send(.ping(Ping(nonce: 2)), "b", on: &machine)
        let c = try Self.send(Self.info, "c", on: &machine)
        #expect(Set([a, b, c]).count == 3 && !([a, b, c].contains(0)))
        let stream =
            Self.bytes(Self.pong(2), id: b) + Self.bytes(Self.pong(30), id: c, flags: .more)
            + Self.bytes(Self.pong(1), id: a) + Self.bytes(Self.pong(31), id: c)
        var actions: [Machine.Action] = []
        for byte in stream { actions += machine.received([byte], now: Self.start) }
        #expect(
            actions == [
                .succeed("b", [Self.pong(2)]), .succeed("a", [Self.pong(1)]),
                .succeed("c", [Self.pong(30), Self.pong(31)]),
            ])
        #expect(!machine.awaitsFrames)
    }

    @Test("a reply to a request id that awaits nothing is a protocol error that ends the connection")
    func unknownRequestID() throws {
        var machine = Self.established()
        let a = try Self.send(Self.info, "a", on: &machine)
        let actions = machine.received(Self.bytes(Self.pong(5), id: a + 40), now: Self.start)
        guard case .fail("a", let error)? = actions.first else {
            Issue.record("a was not failed: \(actions)")
            return
        }
        #expect(error.code == .malformedFrame && error.origin == .local)
        #expect(error.message.contains("request \(a + 40)"))
        #expect(Self.closing(actions) == error)
        #expect(machine.isClosed)
    }

    @Test("a request past its timeout fails alone; the others carry on and its late reply is dropped")
    func requestTimeout() throws {
        var machine = Self.established()
        let a = try Self.send(Self.info, "a", on: &machine, at: Self.start)
        let b = try Self.send(Self.info, "b", on: &machine, at: Self.start + .seconds(5))
        #expect(machine.nextDeadline == Self.start + .seconds(10))
        #expect(machine.tick(now: Self.start + .seconds(9)).isEmpty)
        let expired = machine.tick(now: Self.start + .seconds(10))
        #expect(expired == [.fail("a", .local(.timedOut, "no reply within 10.0 seconds"))])
        #expect(machine.nextDeadline == Self.start + .seconds(15))
        #expect(machine.received(Self.bytes(Self.pong(1), id: a, flags: .more), now: Self.start + .seconds(11)).isEmpty)
        #expect(machine.received(Self.bytes(Self.pong(2), id: a), now: Self.start + .seconds(11)).isEmpty)
        #expect(!machine.isClosed)
        #expect(
            machine.received(Self.bytes(Self.pong(3), id: b), now: Self.start + .seconds(12)) == [
                .succeed("b", [Self.pong(3)])
            ])
        #expect(machine.nextDeadline == nil)
        // The abandoned request's id is answered in full: a further frame for it is a protocol error again.
        #expect(Self.closing(machine.received(Self.bytes(Self.pong(4), id: a), now: Self.start + .seconds(13))) != nil)
    }

    /// A machine holding one subscription (id 5, received by `s`), subscribed at ``start``.
    static func subscribed() throws -> Machine {
        var machine = established()
        let request = Message.subscribe(Subscribe(.observer(subject: "anna", type: "stepCount", filter: .all)))
        let id = try send(request, "subscribe", subscriber: "s", on: &machine)
        let reply = Message.subscribed(Subscribed(subscriptionID: 5))
        guard machine.received(bytes(reply, id: id), now: start) == [.succeed("subscribe", [reply])] else {
            throw HealthError(.internalError, "not subscribed")
        }
        return machine
    }

    @Test("a silent server holding subscriptions is pinged after the interval and given up after twice it")
    func silenceThenPingThenLost() throws {
        let quiet = Self.established()
        #expect(quiet.nextDeadline == nil, "without requests or subscriptions nothing runs against the clock")

        var machine = try Self.subscribed()
        #expect(machine.nextDeadline == Self.start + .seconds(15))
        let ping = Message.ping(Ping(nonce: Machine.keepAliveNonce))
        #expect(machine.tick(now: Self.start + .seconds(15)) == [.sendControl(ping, requestID: 0)])
        // The pong under id 0 answers the heartbeat: heard, and no request's reply.
        #expect(
            machine.received(Self.bytes(Self.pong(Machine.keepAliveNonce), id: 0), now: Self.start + .seconds(16))
                .isEmpty)
        #expect(machine.nextDeadline == Self.start + .seconds(31))
        #expect(machine.tick(now: Self.start + .seconds(31)) == [.sendControl(ping, requestID: 0)])
        #expect(machine.nextDeadline == Self.start + .seconds(46))
        let actions = machine.tick(now: Self.start + .seconds(46))
        guard case .end("s", let error)? = actions.first, actions.count == 2 else {
            Issue.record("the subscription did not end: \(actions)")
            return
        }
        #expect(error.code == .connectionLost && error.message.contains("not even a pong"))
        #expect(Self.closing(actions) == error)
    }

    @Test("closing fails every waiting request with connectionLost, ends every subscription, fails later requests")
    func closeFailsEverything() throws {
        var machine = try Self.subscribed()
        _ = try Self.send(Self.info, "a", on: &machine)
        _ = try Self.send(Self.info, "b", on: &machine)
        let error = HealthClientError.local(.connectionLost, "the connection was closed by the client")
        #expect(machine.failed(error) == [.fail("a", error), .fail("b", error), .end("s", error), .close(error)])
        #expect(machine.failed(error).isEmpty, "once")
        #expect(machine.request(Self.info, waiter: "c", now: Self.start) == [.fail("c", error)])
        #expect(machine.received(Self.bytes(Self.pong(1), id: 1), now: Self.start).isEmpty)

        var dropped = Self.established()
        _ = try Self.send(Self.info, "d", on: &dropped)
        let lost = HealthClientError.local(.connectionLost, "the server closed the connection")
        #expect(dropped.peerClosed() == [.fail("d", lost), .close(lost)])
    }

    @Test("a subscription's updates are delivered in order after subscribed, and none after unsubscribing")
    func subscriptionUpdates() throws {
        var machine = Self.established()
        let request = Message.subscribe(Subscribe(.observer(subject: "anna", type: "stepCount", filter: .all)))
        let id = try Self.send(request, "subscribe", subscriber: "s", on: &machine)
        let reply = Message.subscribed(Subscribed(subscriptionID: 5))
        let updates = (1...3).map { Update(.changed(anchor: UInt64($0))) }
        // The reply and the updates after it in one read: the subscription is installed before they are delivered.
        let stream = Self.bytes(reply, id: id) + updates.flatMap { Self.bytes(.update($0), id: 5) }
        let actions = machine.received(stream, now: Self.start)
        #expect(actions == [.succeed("subscribe", [reply])] + updates.map { .update("s", $0) })
        // An update of a subscription not held here (unsubscribed, or never confirmed) is dropped, not an error.
        #expect(machine.received(Self.bytes(.update(updates[0]), id: 6), now: Self.start).isEmpty)
        machine.unsubscribe(5)
        #expect(machine.received(Self.bytes(.update(updates[1]), id: 5), now: Self.start).isEmpty)
        #expect(!machine.isClosed)
    }

    @Test("a connection-level error ends the connection with it; a ping from the server gets its pong")
    func serverFrames() throws {
        var machine = Self.established()
        #expect(
            machine.received(Self.bytes(.ping(Ping(nonce: 77)), id: 12), now: Self.start)
                == [.sendControl(Self.pong(77), requestID: 12)])
        _ = try Self.send(Self.info, "a", on: &machine)
        let idle = HealthError(.idleTimeout, "the connection was idle for 300 s")
        var reply = ErrorReply(idle)
        reply.closesConnection = true
        let error = HealthClientError(.server, reply.healthError)
        #expect(
            machine.received(Self.bytes(.error(reply), id: 0), now: Self.start) == [.fail("a", error), .close(error)])
    }
}
