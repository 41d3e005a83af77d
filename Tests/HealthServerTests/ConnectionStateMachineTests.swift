import HealthCodec
import HealthModel
import HealthWire
import Testing

@testable import HealthServer

@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    static let limits = SessionLimits(
        maxFrameBytes: 1 << 20, maxInflatedBytes: 4 << 20, maxBatchRows: 1000, maxPipelinedRequests: 2,
        idleTimeoutSeconds: 300)

    /// Accepts every hello at once as "tester" (like `--auth off`), or refuses every one.
    struct StubAuthenticator: HandshakeAuthenticator {
        var refuse: Bool
        func begin(_ hello: Hello, payload: [UInt8]) throws(HealthError) -> HandshakeStart {
            if refuse { throw HealthError(.unauthenticated, "the token is not valid") }
            return .accepted(ClientIdentity(name: "tester"))
        }
        func finish(_ pending: PendingAuthentication, proof: Proof) throws(HealthError) -> (
            ClientIdentity, serverSignature: [UInt8]
        ) {
            throw HealthError(.handshakeRequired, "no challenge was sent")
        }
    }

    static func machine(refuse: Bool = false) -> ConnectionStateMachine {
        ConnectionStateMachine(
            limits: limits, serverVersion: "hkd test", connectionID: 9, authenticator: StubAuthenticator(refuse: refuse)
        )
    }

    static func bytes(_ message: Message, id: UInt32) -> [UInt8] { FrameEncoder().encode(message.frame(requestID: id)) }
    static let hello = bytes(.hello(Hello(clientName: "test", tokenID: 0, clientNonce: [])), id: 0)

    /// The messages written by `actions`, decoded.
    static func written(_ actions: [ConnectionStateMachine.Action]) throws -> [Message] {
        var decoder = FrameDecoder()
        for case .write(let bytes) in actions { decoder.append(bytes) }
        var messages: [Message] = []
        while let frame = try decoder.next() { messages.append(try Message.decode(frame)) }
        return messages
    }

    static func closes(_ actions: [ConnectionStateMachine.Action]) -> Bool {
        actions.contains { if case .close = $0 { true } else { false } }
    }

    @Test("hello is answered with welcome and the announced limits")
    func handshake() throws {
        var machine = Self.machine()
        let actions = machine.received(Self.hello)
        guard case .welcome(let welcome) = try Self.written(actions).first else {
            Issue.record("no welcome in \(actions)")
            return
        }
        #expect(welcome.identity == "tester")
        #expect(welcome.connectionID == 9)
        #expect(welcome.limits == Self.limits)
        #expect(!Self.closes(actions))
    }

    @Test("a request before hello gets handshakeRequired and the connection closes")
    func requestBeforeHello() throws {
        var machine = Self.machine()
        let actions = machine.received(Self.bytes(.serverInfoQuery(ServerInfoQuery()), id: 4))
        guard case .error(let reply) = try Self.written(actions).first else {
            Issue.record("no error")
            return
        }
        #expect(reply.code == ErrorCode.handshakeRequired.rawValue)
        #expect(Self.closes(actions))
        #expect(machine.isClosed)
        #expect(machine.received(Self.hello).isEmpty)
    }

    @Test("before and after hello, a frame of the wrong kind gets handshakeRequired before its payload is decoded")
    func wrongKindIsNotDecoded() throws {
        // A request kind whose payload does not decode: malformedPayload (106) once established, but in the
        // handshake its kind alone is wrong (PROTOCOL.md: anything but hello first gets 105).
        let garbage = FrameEncoder().encode(Frame(kind: .statisticsQuery, requestID: 3, payload: [0xFF, 0xFF, 0xFF]))
        var fresh = Self.machine()
        let early = fresh.received(garbage)
        guard case .error(let reply) = try Self.written(early).first else {
            Issue.record("no error in \(early)")
            return
        }
        #expect(reply.code == ErrorCode.handshakeRequired.rawValue)
        #expect(reply.closesConnection)
        #expect(Self.closes(early))

        var established = Self.machine()
        _ = established.received(Self.hello)
        guard case .error(let later) = try Self.written(established.received(garbage)).first else {
            Issue.record("no error after hello")
            return
        }
        #expect(later.code == ErrorCode.malformedPayload.rawValue)

        // A second hello with a payload that does not decode is refused as a second hello.
        var twice = Self.machine()
        _ = twice.received(Self.hello)
        let second = FrameEncoder().encode(Frame(kind: .hello, requestID: 4, payload: [0xFF]))
        guard case .error(let again) = try Self.written(twice.received(second)).first else {
            Issue.record("no error for a second hello")
            return
        }
        #expect(again.code == ErrorCode.handshakeRequired.rawValue)
    }

    @Test("a refused token gets unauthenticated and the connection closes")
    func refusedToken() throws {
        var machine = Self.machine(refuse: true)
        let actions = machine.received(Self.hello)
        guard case .error(let reply) = try Self.written(actions).first else {
            Issue.record("no error")
            return
        }
        #expect(reply.code == ErrorCode.unauthenticated.rawValue)
        #expect(Self.closes(actions))
    }

    @Test("a second hello is refused")
    func secondHello() throws {
        var machine = Self.machine()
        _ = machine.received(Self.hello)
        let actions = machine.received(Self.hello)
        #expect(Self.closes(actions))
    }

    @Test("ping is answered by the machine itself, with the same nonce and request id")
    func ping() throws {
        var machine = Self.machine()
        _ = machine.received(Self.hello)
        let actions = machine.received(Self.bytes(.ping(Ping(nonce: 77)), id: 5))
        #expect(try Self.written(actions) == [.pong(Pong(nonce: 77))])
    }

    @Test("requests are dispatched up to the pipelining limit; the rest wait until one completes")
    func pipeliningLimit() throws {
        var machine = Self.machine()
        _ = machine.received(Self.hello)
        var stream: [UInt8] = []
        for id in 1...3 { stream += Self.bytes(.serverInfoQuery(ServerInfoQuery()), id: UInt32(id)) }
        let first = machine.received(stream)
        let dispatched = first.compactMap { action -> UInt32? in
            if case .dispatch(let id, _, _) = action { return id }
            return nil
        }
        #expect(dispatched == [1, 2])
        #expect(!machine.wantsToRead)
        let released = machine.requestCompleted()
        #expect(released.count == 1)
        if case .dispatch(let id, _, let identity) = released.first {
            #expect(id == 3)
            #expect(identity.name == "tester")
        } else {
            Issue.record("request 3 was not released")
        }
        _ = machine.requestCompleted()
        _ = machine.requestCompleted()
        #expect(machine.wantsToRead)
        #expect(machine.inFlight == 0)
    }

    @Test("an invalid request gets its error reply, is not dispatched, and the connection stays open")
    func invalidRequest() throws {
        var machine = Self.machine()
        _ = machine.received(Self.hello)
        let query = StatisticsQuery(subject: "anna", type: "heartRate", options: .cumulativeSum)
        let actions = machine.received(Self.bytes(.statisticsQuery(query), id: 8))
        guard case .error(let reply) = try Self.written(actions).first else {
            Issue.record("no error")
            return
        }
        #expect(reply.code == ErrorCode.invalidOptions.rawValue)
        #expect(!reply.closesConnection)
        #expect(!Self.closes(actions))
        #expect(machine.inFlight == 0)
    }

    @Test("a reply kind sent by a client is refused without closing")
    func replyFromClient() throws {
        var machine = Self.machine()
        _ = machine.received(Self.hello)
        let actions = machine.received(Self.bytes(.deleteAck(DeleteAck(deleted: 1)), id: 3))
        guard case .error(let reply) = try Self.written(actions).first else {
            Issue.record("no error")
            return
        }
        #expect(reply.code == ErrorCode.invalidArgument.rawValue)
        #expect(!Self.closes(actions))
    }

    @Test("garbage after the handshake closes with malformedFrame; terminate sends its error once")
    func garbageAndTerminate() throws {
        var machine = Self.machine()
        _ = machine.received(Self.hello)
        let actions = machine.received([0x00, 0x01, 0x02])
        guard case .error(let reply) = try Self.written(actions).first else {
            Issue.record("no error")
            return
        }
        #expect(reply.code == ErrorCode.malformedFrame.rawValue)
        #expect(reply.closesConnection)
        #expect(machine.terminate(HealthError(.idleTimeout, "idle")).isEmpty)

        var idle = Self.machine()
        _ = idle.received(Self.hello)
        let timeout = idle.terminate(HealthError(.idleTimeout, "the connection was idle for 300 s"))
        #expect(
            try Self.written(timeout).first
                == .error(
                    ErrorReply(
                        code: 107, retryable: false, closesConnection: true,
                        message: "the connection was idle for 300 s")))
        #expect(Self.closes(timeout))
    }

    @Test("before hello, frames over 64 KiB are refused, on the wire or once inflated")
    func handshakeFrameLimit() throws {
        let big = Message.hello(Hello(clientName: String(repeating: "x", count: 70_000), tokenID: 0, clientNonce: []))
        for (compress, code) in [(false, ErrorCode.frameTooLarge), (true, ErrorCode.inflatedTooLarge)] {
            var machine = Self.machine()
            let encoder = compress ? FrameEncoder() : FrameEncoder(compressionThreshold: .max)
            let actions = machine.received(encoder.encode(big.frame(requestID: 0)))
            guard case .error(let reply) = try Self.written(actions).first else {
                Issue.record("no error")
                continue
            }
            #expect(reply.code == code.rawValue)
            #expect(Self.closes(actions))
        }
    }
}
