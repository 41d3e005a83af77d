import HealthCodec
import HealthModel
import HealthWire
import Testing

@testable import HealthServer

/// The connection's deadlines, driven by made-up instants: no test here waits for a clock.
@Suite("Connection deadlines")
struct ConnectionDeadlineTests {
    typealias Machine = ConnectionStateMachine
    static let t0 = ContinuousClock.now
    static let deadlines = ConnectionDeadlines(
        handshake: .seconds(10), frame: .seconds(10), minimumBytesPerSecond: 1000, idle: .seconds(300),
        unreadReplies: .seconds(30))

    static func machine() -> Machine {
        Machine(
            limits: ConnectionStateMachineTests.limits, serverVersion: "hkd test", connectionID: 1,
            deadlines: deadlines, now: t0, authenticator: ConnectionStateMachineTests.StubAuthenticator(refuse: false))
    }

    static func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }

    /// The error code of the error frame `actions` write, if they close the connection.
    static func closingCode(_ actions: [Machine.Action]) throws -> UInt16? {
        guard ConnectionStateMachineTests.closes(actions) else { return nil }
        for case .error(let reply) in try ConnectionStateMachineTests.written(actions) { return reply.code }
        return nil
    }

    static func established() -> Machine {
        var machine = machine()
        _ = machine.received(ConnectionStateMachineTests.hello, now: at(0))
        return machine
    }

    @Test("a handshake not completed within its deadline closes with idleTimeout, whatever bytes trickle in")
    func handshakeDeadline() throws {
        var machine = Self.machine()
        let hello = ConnectionStateMachineTests.hello
        // One byte every 3 s: each is activity of a kind, none completes the hello.
        for (index, byte) in hello.prefix(3).enumerated() {
            #expect(machine.received([byte], now: Self.at(Double(index) * 3)).isEmpty)
            #expect(machine.tick(now: Self.at(Double(index) * 3 + 1)).isEmpty)
        }
        #expect(machine.nextDeadline == Self.at(10))
        #expect(machine.tick(now: Self.at(9.9)).isEmpty)
        let actions = machine.tick(now: Self.at(10))
        #expect(try Self.closingCode(actions) == ErrorCode.idleTimeout.rawValue)
        #expect(machine.isClosed)
        #expect(machine.nextDeadline == nil)
    }

    @Test("a frame begun must finish within the base deadline plus its length at the minimum rate")
    func slowFrame() throws {
        var machine = Self.established()
        var frame = ConnectionStateMachineTests.bytes(.serverInfoQuery(ServerInfoQuery()), id: 5)
        // Declare a 5,000-byte payload: 10 s + 5,000 B at 1,000 B/s = 15 s from the first byte.
        frame.replaceSubrange(12..<16, with: [0x88, 0x13, 0, 0])
        #expect(machine.received(frame.prefix(20), now: Self.at(100)).isEmpty)
        #expect(machine.nextDeadline == Self.at(115))
        // Trickling bytes do not move the deadline.
        #expect(machine.received([0], now: Self.at(110)).isEmpty)
        #expect(machine.tick(now: Self.at(114.9)).isEmpty)
        #expect(try Self.closingCode(machine.tick(now: Self.at(115))) == ErrorCode.idleTimeout.rawValue)
    }

    @Test("the idle timer counts from the last complete frame; a partial frame does not reset it")
    func idleIgnoresPartialFrames() throws {
        var machine = Self.established()
        let ping = ConnectionStateMachineTests.bytes(.ping(Ping(nonce: 1)), id: 2)
        _ = machine.received(ping, now: Self.at(50))
        #expect(machine.nextDeadline == Self.at(350))
        // Three header bytes at 345 s: the frame deadline (355 s) is later than the idle one.
        _ = machine.received(ping.prefix(3), now: Self.at(345))
        #expect(machine.nextDeadline == Self.at(350))
        #expect(try Self.closingCode(machine.tick(now: Self.at(350))) == ErrorCode.idleTimeout.rawValue)
    }

    @Test("a request in flight or a subscription keeps the connection from idling out")
    func busyIsNotIdle() throws {
        var machine = Self.established()
        let query = ConnectionStateMachineTests.bytes(.serverInfoQuery(ServerInfoQuery()), id: 3)
        let actions = machine.received(query, now: Self.at(1))
        #expect(actions.contains { if case .dispatch = $0 { true } else { false } })
        #expect(machine.nextDeadline == nil)
        #expect(machine.tick(now: Self.at(1000)).isEmpty)
        _ = machine.requestCompleted(now: Self.at(1000))
        #expect(machine.nextDeadline == Self.at(1300))
        machine.holdsSubscriptions = true
        #expect(machine.tick(now: Self.at(5000)).isEmpty)
    }

    @Test("waiting on the pipelining limit is not the peer's slowness: no frame deadline runs meanwhile")
    func pipeliningPauseHasNoFrameDeadline() throws {
        var machine = Self.established()
        let query = ConnectionStateMachineTests.bytes(.serverInfoQuery(ServerInfoQuery()), id: 3)
        // The limit is 2: the third request stays buffered, whole, until one completes.
        _ = machine.received(query + query + query, now: Self.at(1))
        #expect(machine.inFlight == 2)
        #expect(machine.nextDeadline == nil)
        let released = machine.requestCompleted(now: Self.at(40))
        #expect(released.contains { if case .dispatch = $0 { true } else { false } })
    }

    @Test("replies left unread past their deadline abort the connection without a flush")
    func unreadReplies() throws {
        var machine = Self.established()
        machine.writabilityChanged(false, now: Self.at(5))
        machine.writabilityChanged(false, now: Self.at(20))
        #expect(machine.nextDeadline == Self.at(35))
        #expect(machine.tick(now: Self.at(34)).isEmpty)
        let actions = machine.tick(now: Self.at(35))
        #expect(actions.count == 1)
        guard case .abort = actions.first else {
            Issue.record("not aborted: \(actions)")
            return
        }
        // Draining in time clears it.
        var other = Self.established()
        other.writabilityChanged(false, now: Self.at(5))
        other.writabilityChanged(true, now: Self.at(30))
        #expect(other.tick(now: Self.at(100)).isEmpty)
    }

    @Test("a compressed frame is handed out for decoding off the loop, then dispatched like any request")
    func compressedFramesDecodeOffTheLoop() throws {
        var machine = Self.established()
        var batch = SampleBatch(batchID: 9, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for minute in 0..<2000 {
            batch.append(
                start: Int64(minute) * 60_000_000, end: Int64(minute + 1) * 60_000_000, value: 3,
                source: SourceInfo(name: "w"))
        }
        let bytes = FrameEncoder(compressionThreshold: 0).encode(
            Message.insert(Insert(batch: batch)).frame(requestID: 7))
        #expect(bytes[4] & FrameFlags.compressed.rawValue != 0)
        let actions = machine.received(bytes, now: Self.at(1))
        guard case .decode(let frame, let identity) = actions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(machine.inFlight == 1)
        let outcome = Machine.decodeRequest(frame, limits: ConnectionStateMachineTests.limits)
        let dispatched = machine.decoded(outcome, frame: frame, identity: identity, now: Self.at(2))
        guard case .dispatch(7, let request, _) = dispatched.first, case .insert(let decoded) = request.message else {
            Issue.record("\(dispatched)")
            return
        }
        #expect(decoded.batch == batch)
        #expect(machine.inFlight == 1)
        // A payload that does not inflate closes the connection, as on the loop.
        var broken = frame
        broken.payload[broken.payload.count - 3] ^= 0xFF
        var other = Self.established()
        _ = other.received(bytes, now: Self.at(1))
        let failed = other.decoded(
            Machine.decodeRequest(broken, limits: ConnectionStateMachineTests.limits), frame: broken, identity: identity
        )
        #expect(ConnectionStateMachineTests.closes(failed))
    }
}
