import HealthCodec
import HealthModel
import HealthWire

/// Who is on the other end of a connection, once the handshake has succeeded.
public struct ClientIdentity: Hashable, Sendable {
    public var name: String
    /// The identity's numeric id in the ``IdentityRegistry`` (its writer id); 0 when authorization is off.
    public var id: UInt32
    public init(name: String, id: UInt32 = 0) {
        self.name = name
        self.id = id
    }
}

/// How long a connection may take over each step before it is closed (PROTOCOL.md, Limits). Slow senders
/// ("slowloris") and silent peers must not hold a connection slot for longer than these.
public struct ConnectionDeadlines: Hashable, Sendable {
    /// From accept to a completed handshake.
    public var handshake: Duration
    /// Once the first byte of a frame arrived, the frame must be complete within this plus its declared length
    /// at ``minimumBytesPerSecond``.
    public var frame: Duration
    /// The slowest upload rate a large frame may arrive at.
    public var minimumBytesPerSecond: Int
    /// No complete frame received and no reply sent for this long, with no request in flight and no
    /// subscription held: the connection is idle and closed. `nil`: never.
    public var idle: Duration?
    /// Replies left unread this long (the outbound queue above its high-water mark): the connection is closed
    /// without waiting for the flush.
    public var unreadReplies: Duration

    /// Deadlines; the defaults are hkd's.
    public init(
        handshake: Duration = .seconds(10), frame: Duration = .seconds(10), minimumBytesPerSecond: Int = 64 << 10,
        idle: Duration? = .seconds(300), unreadReplies: Duration = .seconds(30)
    ) {
        self.handshake = handshake
        self.frame = frame
        self.minimumBytesPerSecond = max(1, minimumBytesPerSecond)
        self.idle = idle
        self.unreadReplies = unreadReplies
    }
}

/// The protocol logic of one connection, free of sockets, threads and the wall clock: bytes and instants in,
/// actions out.
///
/// Handles the handshake, ping, malformed input, the pipelining limit and every deadline itself; every other
/// request comes out as a `.dispatch` action (or `.decode` first, for a compressed or large frame), and the owner
/// reports its completion with ``requestCompleted(now:)``. Time enters only as the `now` the owner passes, so the
/// deadlines are tested with made-up instants. Not thread-safe: the owning event loop drives it.
public struct ConnectionStateMachine: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// What the owner must do, in order.
    public enum Action: Equatable, Sendable {
        /// Send these bytes (one or more encoded frames).
        case write([UInt8])
        /// Run this request and send its reply frames tagged with `requestID`.
        case dispatch(requestID: UInt32, request: PreparedRequest, identity: ClientIdentity)
        /// Inflate and decode this frame off the event loop (``decodeRequest(_:limits:)``), then report the
        /// outcome with ``decoded(_:frame:identity:now:)``.
        case decode(Frame, identity: ClientIdentity)
        /// Close the connection after the writes before this action are flushed.
        case close(reason: String)
        /// Close the connection now, dropping what is queued (its peer does not read).
        case abort(reason: String)
    }

    /// Frames with a payload larger than this are decoded off the event loop even when not compressed.
    public static let largeFrameBytes = 256 << 10

    private enum State: Sendable {
        case awaitingHello
        /// A challenge was sent; only its proof may follow.
        case awaitingProof(PendingAuthentication)
        case established(ClientIdentity)
        case closed
    }

    private var state = State.awaitingHello
    private var decoder = FrameDecoder(limits: .handshake)
    private let encoder = FrameEncoder()
    private let limits: SessionLimits
    private let serverVersion: String
    private let connectionID: UInt64
    private let authenticator: any HandshakeAuthenticator
    private let deadlines: ConnectionDeadlines
    /// Requests dispatched (or being decoded) and not yet completed.
    public private(set) var inFlight = 0
    /// Set by the owner: a connection holding subscriptions waits for updates and is never idle.
    public var holdsSubscriptions = false
    /// Set by the owner: called with the code of every error the machine itself answers (malformed input,
    /// invalid requests, refused handshakes, deadlines), for its metrics.
    public var onError: (@Sendable (ErrorCode) -> Void)?
    private let openedAt: Instant
    /// The last complete frame received or reply completed.
    private var lastActivity: Instant
    /// When the frame being received began to arrive; `nil` when no partial frame is buffered (or reading is
    /// paused by the pipelining limit, which is not the peer's doing).
    private var partialSince: Instant?
    /// Since when replies have piled up unread.
    private var unwritableSince: Instant?

    public init(
        limits: SessionLimits, serverVersion: String, connectionID: UInt64,
        deadlines: ConnectionDeadlines = ConnectionDeadlines(), now: Instant = .now,
        authenticator: any HandshakeAuthenticator
    ) {
        self.limits = limits
        self.serverVersion = serverVersion
        self.connectionID = connectionID
        self.authenticator = authenticator
        self.deadlines = deadlines
        openedAt = now
        lastActivity = now
    }

    /// Whether the handshake has succeeded.
    public var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// The payload length of the frame being received, once its header arrived (for the owner's memory budget).
    public var pendingPayloadLength: Int? { decoder.pendingPayloadLength }

    /// Whether the owner should keep reading from the socket (false while the pipelining limit is reached or
    /// after the connection was closed).
    public var wantsToRead: Bool {
        if case .closed = state { return false }
        return inFlight < Int(clamping: limits.maxPipelinedRequests)
    }

    public var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Bytes arrived from the peer.
    public mutating func received(_ bytes: some Collection<UInt8>, now: Instant = .now) -> [Action] {
        guard !isClosed else { return [] }
        decoder.append(bytes)
        return drain(now)
    }

    /// A dispatched request has sent its last reply frame; may release buffered requests.
    public mutating func requestCompleted(now: Instant = .now) -> [Action] {
        inFlight -= 1
        lastActivity = now
        return drain(now)
    }

    /// The outbound queue rose above its high-water mark (`false`) or drained (`true`).
    public mutating func writabilityChanged(_ writable: Bool, now: Instant = .now) {
        unwritableSince = writable ? nil : (unwritableSince ?? now)
    }

    /// The earliest instant at which ``tick(now:)`` may have something to do; `nil` when no deadline runs.
    public var nextDeadline: Instant? {
        guard !isClosed else { return nil }
        var next: Instant?
        func consider(_ instant: Instant) { next = min(next ?? instant, instant) }
        if let since = unwritableSince { consider(since + deadlines.unreadReplies) }
        if !isEstablished { consider(openedAt + deadlines.handshake) }
        if let since = partialSince { consider(since + frameAllowance) }
        if let idle = deadlines.idle, isEstablished, inFlight == 0, !holdsSubscriptions {
            consider(lastActivity + idle)
        }
        return next
    }

    /// Checks every deadline at `now`: the actions that end a connection which missed one, else none.
    public mutating func tick(now: Instant) -> [Action] {
        guard !isClosed else { return [] }
        if let since = unwritableSince, now >= since + deadlines.unreadReplies {
            state = .closed
            return [.abort(reason: "replies were not read for \(Self.seconds(deadlines.unreadReplies)) s")]
        }
        if !isEstablished, now >= openedAt + deadlines.handshake {
            let limit = Self.seconds(deadlines.handshake)
            return fail(HealthError(.idleTimeout, "the handshake did not complete within \(limit) s"), requestID: 0)
        }
        if let since = partialSince, now >= since + frameAllowance {
            let length = decoder.pendingPayloadLength.map { "a frame of \($0) bytes" } ?? "a frame header"
            let limit = Self.seconds(frameAllowance)
            return fail(HealthError(.idleTimeout, "\(length) did not arrive within \(limit) s"), requestID: 0)
        }
        if let idle = deadlines.idle, isEstablished, inFlight == 0, !holdsSubscriptions, now >= lastActivity + idle {
            return fail(HealthError(.idleTimeout, "the connection was idle for \(Self.seconds(idle)) s"), requestID: 0)
        }
        return []
    }

    /// A frame from a `.decode` action was inflated and decoded (or failed to) off the loop.
    public mutating func decoded(
        _ outcome: Result<Message, HealthError>, frame: Frame, identity: ClientIdentity, now: Instant = .now
    ) -> [Action] {
        inFlight -= 1
        guard !isClosed else { return [] }
        switch outcome {
        case .failure(let error):
            return fail(error, requestID: frame.requestID)
        case .success(let message):
            return handleEstablished(message, frame: frame, identity: identity) + drain(now)
        }
    }

    /// A frame from a `.decode` action is not decoded after all (the server is busy): its request gets `error`,
    /// and the connection carries on.
    public mutating func refused(_ frame: Frame, _ error: HealthError, now: Instant = .now) -> [Action] {
        inFlight -= 1
        guard !isClosed else { return [] }
        return [errorReply(error, requestID: frame.requestID)] + drain(now)
    }

    /// Inflates and decodes a frame from a `.decode` action; thread-safe, meant for a worker thread.
    public static func decodeRequest(_ frame: Frame, limits: SessionLimits) -> Result<Message, HealthError> {
        do throws(HealthError) {
            let inflated: Frame
            do {
                inflated = try FrameDecoder.inflate(frame, limits: limits.frameLimits)
            } catch {
                throw error.healthError
            }
            return .success(try Message.decode(inflated))
        } catch {
            return .failure(error)
        }
    }

    /// How long the frame being received may take: the base deadline plus its length at the minimum rate.
    private var frameAllowance: Duration {
        let length = decoder.pendingPayloadLength ?? 0
        return deadlines.frame + .milliseconds(Int64(length) * 1000 / Int64(deadlines.minimumBytesPerSecond))
    }

    private static func seconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds + (attoseconds > 0 ? 1 : 0)
    }

    /// The connection must end (idle timeout, server shutdown): an error frame, then close.
    public mutating func terminate(_ error: HealthError) -> [Action] {
        guard !isClosed else { return [] }
        return fail(error, requestID: 0)
    }

    /// Encodes one reply message.
    public func encode(_ message: Message, requestID: UInt32, flags: FrameFlags = []) -> [UInt8] {
        encoder.encode(message.frame(requestID: requestID, flags: flags))
    }

    private mutating func drain(_ now: Instant) -> [Action] {
        var actions: [Action] = []
        while !isClosed, inFlight < Int(clamping: limits.maxPipelinedRequests) {
            let frame: Frame?
            do {
                frame = try decoder.next()
            } catch {
                actions += fail(error.healthError, requestID: 0)
                break
            }
            guard let frame else { break }
            partialSince = nil
            lastActivity = now
            actions += handle(frame)
        }
        // A frame begun and not finished runs against its deadline, unless reading waits on our own limit.
        if isClosed || inFlight >= Int(clamping: limits.maxPipelinedRequests) || decoder.bufferedByteCount == 0 {
            partialSince = nil
        } else if partialSince == nil {
            partialSince = now
        }
        return actions
    }

    private mutating func handle(_ frame: Frame) -> [Action] {
        if case .established(let identity) = state,
            frame.flags.contains(.compressed) || frame.payload.count > Self.largeFrameBytes
        {
            // Inflating and decoding a large payload would stall every other connection on this loop.
            inFlight += 1
            return [.decode(frame, identity: identity)]
        }
        // In the handshake only one kind is accepted: any other gets handshakeRequired before its payload is
        // decoded (a request's payload is not looked at before the client is known).
        switch (state, frame.kind) {
        case (.awaitingHello, let kind) where kind != .hello:
            return fail(
                HealthError(.handshakeRequired, "the first frame must be hello, not \(kind)"),
                requestID: frame.requestID)
        case (.awaitingProof, let kind) where kind != .proof:
            return fail(
                HealthError(.handshakeRequired, "the answer to challenge must be proof, not \(kind)"),
                requestID: frame.requestID)
        case (.established, .hello), (.established, .proof):
            return fail(Self.handshakeOver(frame.kind), requestID: frame.requestID)
        default:
            break
        }
        let message: Message
        do {
            message = try Message.decode(frame)
        } catch {
            // A payload that does not decode means the peer's framing cannot be trusted either.
            return fail(error, requestID: frame.requestID)
        }
        switch state {
        case .closed:
            return []
        case .awaitingHello:
            guard case .hello(let hello) = message else {
                preconditionFailure("a \(frame.kind) frame decoded as hello")
            }
            return handshake(hello, payload: frame.payload, requestID: frame.requestID)
        case .awaitingProof(let pending):
            guard case .proof(let proof) = message else {
                preconditionFailure("a \(frame.kind) frame decoded as proof")
            }
            return complete(pending, proof: proof, requestID: frame.requestID)
        case .established(let identity):
            return handleEstablished(message, frame: frame, identity: identity)
        }
    }

    private mutating func handleEstablished(_ message: Message, frame: Frame, identity: ClientIdentity) -> [Action] {
        switch message {
        case .hello, .proof:
            return fail(Self.handshakeOver(frame.kind), requestID: frame.requestID)
        case .ping(let ping):
            return [.write(encode(.pong(Pong(nonce: ping.nonce)), requestID: frame.requestID))]
        case .pong:
            return []
        default:
            let request: PreparedRequest
            do {
                guard let prepared = try message.prepared() else {
                    throw HealthError(.invalidArgument, "\(frame.kind) is a reply; a client may not send it")
                }
                request = prepared
            } catch {
                return [errorReply(RequestDispatcher.healthError(error, of: message), requestID: frame.requestID)]
            }
            inFlight += 1
            return [.dispatch(requestID: frame.requestID, request: request, identity: identity)]
        }
    }

    /// The refusal of a `hello` or `proof` after the handshake.
    private static func handshakeOver(_ kind: MessageKind) -> HealthError {
        HealthError(.handshakeRequired, "\(kind) is only part of the handshake, which is over")
    }

    private mutating func handshake(_ hello: Hello, payload: [UInt8], requestID: UInt32) -> [Action] {
        guard hello.protocolVersion == protocolVersion else {
            return fail(
                HealthError(
                    .unsupportedVersion,
                    "protocol version \(hello.protocolVersion) is not supported; this server speaks \(protocolVersion)"),
                requestID: requestID)
        }
        let start: HandshakeStart
        do {
            start = try authenticator.begin(hello, payload: payload)
        } catch {
            return fail(error, requestID: requestID)
        }
        switch start {
        case .accepted(let identity):
            return establish(identity, serverSignature: [], requestID: requestID)
        case .challenge(let challenge, let pending):
            state = .awaitingProof(pending)
            return [.write(encode(.challenge(challenge), requestID: requestID))]
        }
    }

    private mutating func complete(_ pending: PendingAuthentication, proof: Proof, requestID: UInt32) -> [Action] {
        let identity: ClientIdentity
        let signature: [UInt8]
        do {
            (identity, signature) = try authenticator.finish(pending, proof: proof)
        } catch {
            return fail(error, requestID: requestID)
        }
        return establish(identity, serverSignature: signature, requestID: requestID)
    }

    private mutating func establish(_ identity: ClientIdentity, serverSignature: [UInt8], requestID: UInt32) -> [Action]
    {
        state = .established(identity)
        decoder.limits = limits.frameLimits
        decoder.defersInflation = true
        let welcome = Welcome(
            serverVersion: serverVersion, connectionID: connectionID, identity: identity.name, limits: limits,
            serverSignature: serverSignature)
        return [.write(encode(.welcome(welcome), requestID: requestID))]
    }

    /// An error reply to one request; the connection stays open.
    private func errorReply(_ error: HealthError, requestID: UInt32) -> Action {
        onError?(error.code)
        return .write(encode(.error(ErrorReply(error)), requestID: requestID))
    }

    private mutating func fail(_ error: HealthError, requestID: UInt32) -> [Action] {
        state = .closed
        var reply = ErrorReply(error)
        reply.closesConnection = true
        onError?(error.code)
        return [.write(encode(.error(reply), requestID: requestID)), .close(reason: error.message)]
    }
}
