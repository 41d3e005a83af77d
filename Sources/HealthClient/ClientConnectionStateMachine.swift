import HealthModel
import HealthWire

/// The protocol logic of one client connection, free of sockets, threads and the clock: bytes, events and
/// instants in, actions out.
///
/// It runs the handshake (hello, challenge → proof, the check of the welcome), numbers requests and matches the
/// replies to them by request id (a streamed reply collected until its last frame), routes pushed updates to their
/// subscription, expires requests after ``ClientConfiguration/requestTimeout``, pings a silent server while
/// subscriptions are held (``Heartbeat``), and ends the connection on loss or a protocol error, failing everything
/// that waits. `Waiter` is what waits for one request's reply and `Subscriber` what receives one subscription's
/// updates (a continuation and ``HealthConnection/SubscriptionHandlers`` in ``HealthConnection``, the owner of
/// the socket); the machine only hands them back in actions. Time enters only as the `now` the owner passes, so
/// the deadlines are tested with made-up instants. Not thread-safe: the owner serialises every call.
struct ClientConnectionStateMachine<Waiter: Sendable, Subscriber: Sendable>: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// What the owner must do, in order.
    enum Action: Sendable {
        /// Write this frame; if it cannot be written, report it with ``failed(_:)``.
        case send(Message, requestID: UInt32)
        /// Write this frame if possible (a heartbeat ping, a pong): a failed write is left to the heartbeat.
        case sendControl(Message, requestID: UInt32)
        /// A request's whole reply: every frame's message, in order.
        case succeed(Waiter, [Message])
        /// A request failed: the server's error reply, a timeout, or the end of the connection.
        case fail(Waiter, HealthClientError)
        /// A subscription's next update.
        case update(Subscriber, Update)
        /// The connection ended while the subscription was held; said once per subscription.
        case end(Subscriber, HealthClientError)
        /// The connection is over, for this reason: shut the socket down (in the handshake: fail the connect).
        case close(HealthClientError)
    }

    /// A request sent and not yet answered in full.
    struct Pending: Sendable {
        let waiter: Waiter
        let deadline: Instant
        /// For a subscribe request: made the subscription's receiver when `subscribed` arrives, before any
        /// update that follows it.
        let subscriber: Subscriber?
        /// The messages of the frames received so far (a streamed reply has several).
        var replies: [Message] = []
    }

    enum State: Sendable {
        /// Nothing sent yet.
        case connecting
        /// hello sent (and perhaps proof); waiting for welcome.
        case handshaking(ClientHandshake)
        case established(Welcome)
        /// Ended: every request fails with this error.
        case closed(HealthClientError)
    }

    /// The nonce of the heartbeat's ping ("hbeartbe"), sent under request id 0, which no request uses.
    static var keepAliveNonce: UInt64 { 0x6862_6561_7274_6265 }

    let configuration: ClientConfiguration
    private let nonce: [UInt8]
    var state = State.connecting
    /// The handshake's frames are read under the standard limits, later ones under the welcome's.
    var decoder = FrameDecoder(limits: .standard)
    /// Set once the handshake succeeded.
    var heartbeat: Heartbeat?
    var nextRequestID: UInt32 = 1
    var pending: [UInt32: Pending] = [:]
    /// Requests that timed out: their late frames are dropped until the last one.
    var abandoned: Set<UInt32> = []
    /// The receivers of the subscriptions held, by subscription id.
    var subscriptions: [UInt32: Subscriber] = [:]

    /// A machine for a connection made per `configuration` (its name, token, TLS, request timeout and heartbeat);
    /// `nonce` is ``TokenAuthentication/nonceBytes`` fresh random bytes with a token, empty without one.
    init(_ configuration: ClientConfiguration, nonce: [UInt8]) {
        self.configuration = configuration
        self.nonce = nonce
    }

    /// The server's welcome, once the handshake succeeded.
    var welcome: Welcome? {
        if case .established(let welcome) = state { return welcome }
        return nil
    }

    /// Whether the connection has ended.
    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Why the connection ended; `nil` while it has not.
    var failure: HealthClientError? {
        if case .closed(let error) = state { return error }
        return nil
    }

    /// Whether request `id` still waits for (more of) its reply.
    func isWaiting(for id: UInt32) -> Bool { pending[id] != nil }

    /// Whether anything waits for frames from the server: a request, or a subscription.
    var awaitsFrames: Bool { !pending.isEmpty || !subscriptions.isEmpty }

    /// The connection is open: the hello to send, or the end of a token that is not shaped like one (nothing is
    /// sent then).
    mutating func connected() -> [Action] {
        guard case .connecting = state else { return [] }
        do {
            let handshake = try ClientHandshake(
                clientName: configuration.clientName, token: configuration.token, nonce: nonce)
            state = .handshaking(handshake)
            return [.send(.hello(handshake.hello), requestID: 0)]
        } catch {
            return fail(.local(error.code, error.message))
        }
    }

    /// Bytes arrived from the server at `now`.
    mutating func received(_ bytes: [UInt8], now: Instant) -> [Action] {
        switch state {
        case .connecting, .closed:
            return []
        case .handshaking:
            if configuration.tls == nil, let first = bytes.first, first == 0x15 || first == 0x16 {
                // A TLS record (an alert, a hello) in answer to a plaintext hello.
                return fail(
                    .local(
                        .tlsRequired,
                        "the server at \(configuration.host):\(configuration.port) speaks TLS: connect with TLS (hkq --tls)"
                    ))
            }
            decoder.append(bytes)
            return handshake(now: now)
        case .established:
            heartbeat?.heard(at: now)
            decoder.append(bytes)
            return drain()
        }
    }

    /// The server closed the connection (a read returned no bytes).
    mutating func peerClosed() -> [Action] {
        if case .established = state { return fail(.local(.connectionLost, "the server closed the connection")) }
        return fail(.local(.connectionLost, "the server closed the connection during the handshake"))
    }

    /// The connection failed on this side (a read or write error, the client closing it): everything that waits
    /// fails with `error`, and so does every later request.
    mutating func failed(_ error: HealthClientError) -> [Action] { fail(error) }

    /// hello's answers: a challenge gets its proof, the welcome ends the handshake, anything else ends the
    /// connection.
    private mutating func handshake(now: Instant) -> [Action] {
        var actions: [Action] = []
        while case .handshaking(var handshake) = state {
            let frame: Frame?
            do {
                frame = try decoder.next()
            } catch {
                return actions + fail(.local(error.code, "the server's handshake reply is malformed: \(error.message)"))
            }
            guard let frame else { break }
            do throws(HealthError) {
                switch try Message.decode(frame) {
                case .challenge(let challenge):
                    let proof = try handshake.respond(to: challenge, payload: frame.payload)
                    state = .handshaking(handshake)
                    actions.append(.send(.proof(proof), requestID: 0))
                case .welcome(let welcome):
                    try handshake.check(welcome)
                    state = .established(welcome)
                    decoder.limits = welcome.limits.frameLimits
                    heartbeat = Heartbeat(interval: configuration.heartbeat, now: now)
                    return actions + drain()
                case .error(let reply):
                    return actions + fail(HealthClientError(.server, reply.healthError))
                default:
                    return actions + fail(.local(.malformedFrame, "the server answered hello with \(frame.kind)"))
                }
            } catch {
                return actions + fail(.local(error.code, error.message))
            }
        }
        return actions
    }

    /// Delivers every whole frame buffered once the handshake is over.
    private mutating func drain() -> [Action] {
        var actions: [Action] = []
        while case .established = state {
            let frame: Frame?
            do {
                frame = try decoder.next()
            } catch {
                return actions + fail(.local(error.code, "malformed frame from the server: \(error.message)"))
            }
            guard let frame else { break }
            let message: Message
            do {
                message = try Message.decode(frame)
            } catch {
                return actions + fail(.local(error.code, "malformed reply from the server: \(error.message)"))
            }
            actions += deliver(message, frame: frame)
        }
        return actions
    }

    private mutating func deliver(_ message: Message, frame: Frame) -> [Action] {
        let id = frame.requestID
        switch message {
        case .update(let update):
            // An update of a subscription given up (unsubscribed, or its subscribe timed out) is dropped.
            guard let subscriber = subscriptions[id] else { return [] }
            return [.update(subscriber, update)]
        case .error(let reply) where reply.closesConnection || id == 0:
            // A connection-level error: the server closes; everything waiting here fails with it.
            return fail(HealthClientError(.server, reply.healthError))
        case .ping(let ping):
            return [.sendControl(.pong(Pong(nonce: ping.nonce)), requestID: id)]
        case .pong where id == 0:
            // The answer to the heartbeat's ping: hearing it was the point.
            return []
        default:
            return reply(message, frame: frame)
        }
    }

    /// One frame of the reply to request `frame.requestID`.
    private mutating func reply(_ message: Message, frame: Frame) -> [Action] {
        let id = frame.requestID
        var isError = false
        if case .error = message { isError = true }
        let isLast = isError || !frame.flags.contains(.more)
        if abandoned.contains(id) {
            if isLast { abandoned.remove(id) }
            return []
        }
        guard var request = pending.removeValue(forKey: id) else {
            return fail(
                .local(.malformedFrame, "the server sent \(frame.kind) for request \(id), which awaits no reply"))
        }
        if let subscriber = request.subscriber, case .subscribed(let subscribed) = message {
            subscriptions[subscribed.subscriptionID] = subscriber
        }
        if case .error(let reply) = message {
            return [.fail(request.waiter, HealthClientError(.server, reply.healthError))]
        }
        request.replies.append(message)
        if !isLast {
            pending[id] = request
            return []
        }
        return [.succeed(request.waiter, request.replies)]
    }

    /// Ends the connection with `error` (once): every waiting request fails, then every subscription ends.
    mutating func fail(_ error: HealthClientError) -> [Action] {
        if case .closed = state { return [] }
        state = .closed(error)
        let waiting = pending.sorted { $0.key < $1.key }.map { Action.fail($0.value.waiter, error) }
        let ends = subscriptions.sorted { $0.key < $1.key }.map { Action.end($0.value, error) }
        pending = [:]
        subscriptions = [:]
        abandoned = []
        decoder = FrameDecoder(limits: .standard)
        return waiting + ends + [.close(error)]
    }
}

extension ClientConnectionStateMachine.Action: Equatable where Waiter: Equatable, Subscriber: Equatable {}
