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

/// The protocol logic of one connection, free of sockets and threads: bytes in, actions out.
///
/// Handles the handshake, ping, malformed input and the pipelining limit itself; every other request comes out
/// as a `.dispatch` action, and the owner reports its completion with ``requestCompleted()``. Not thread-safe:
/// the owning event loop drives it.
public struct ConnectionStateMachine: Sendable {
    /// What the owner must do, in order.
    public enum Action: Equatable, Sendable {
        /// Send these bytes (one or more encoded frames).
        case write([UInt8])
        /// Run this request and send its reply frames tagged with `requestID`.
        case dispatch(requestID: UInt32, message: Message, identity: ClientIdentity)
        /// Close the connection after the writes before this action are flushed.
        case close(reason: String)
    }

    /// Decides who a hello's token belongs to; throws ``HealthError`` (``ErrorCode/unauthenticated``…) to refuse.
    public typealias Authenticator = @Sendable (Hello) throws(HealthError) -> ClientIdentity

    private enum State: Sendable {
        case awaitingHello
        case established(ClientIdentity)
        case closed
    }

    private var state = State.awaitingHello
    private var decoder = FrameDecoder(limits: .handshake)
    private let encoder = FrameEncoder()
    private let limits: SessionLimits
    private let serverVersion: String
    private let connectionID: UInt64
    private let authenticate: Authenticator
    /// Requests dispatched and not yet completed.
    public private(set) var inFlight = 0

    public init(limits: SessionLimits, serverVersion: String, connectionID: UInt64, authenticate: @escaping Authenticator) {
        self.limits = limits
        self.serverVersion = serverVersion
        self.connectionID = connectionID
        self.authenticate = authenticate
    }

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
    public mutating func received(_ bytes: some Collection<UInt8>) -> [Action] {
        guard !isClosed else { return [] }
        decoder.append(bytes)
        return drain()
    }

    /// A dispatched request has sent its last reply frame; may release buffered requests.
    public mutating func requestCompleted() -> [Action] {
        inFlight -= 1
        return drain()
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

    private mutating func drain() -> [Action] {
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
            actions += handle(frame)
        }
        return actions
    }

    private mutating func handle(_ frame: Frame) -> [Action] {
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
                return fail(HealthError(.handshakeRequired, "the first frame must be hello, not \(frame.kind)"), requestID: frame.requestID)
            }
            return handshake(hello, requestID: frame.requestID)
        case .established(let identity):
            switch message {
            case .hello:
                return fail(HealthError(.handshakeRequired, "hello was already received on this connection"), requestID: frame.requestID)
            case .ping(let ping):
                return [.write(encode(.pong(Pong(nonce: ping.nonce)), requestID: frame.requestID))]
            case .pong:
                return []
            default:
                do {
                    try message.validateRequest()
                } catch {
                    return [.write(encode(.error(ErrorReply(error)), requestID: frame.requestID))]
                }
                guard Self.isRequest(frame.kind) else {
                    let error = HealthError(.invalidArgument, "\(frame.kind) is a reply; a client may not send it")
                    return [.write(encode(.error(ErrorReply(error)), requestID: frame.requestID))]
                }
                inFlight += 1
                return [.dispatch(requestID: frame.requestID, message: message, identity: identity)]
            }
        }
    }

    private mutating func handshake(_ hello: Hello, requestID: UInt32) -> [Action] {
        guard hello.protocolVersion == protocolVersion else {
            return fail(
                HealthError(.unsupportedVersion, "protocol version \(hello.protocolVersion) is not supported; this server speaks \(protocolVersion)"),
                requestID: requestID)
        }
        let identity: ClientIdentity
        do {
            identity = try authenticate(hello)
        } catch {
            return fail(error, requestID: requestID)
        }
        state = .established(identity)
        decoder.limits = limits.frameLimits
        let welcome = Welcome(serverVersion: serverVersion, connectionID: connectionID, identity: identity.name, limits: limits)
        return [.write(encode(.welcome(welcome), requestID: requestID))]
    }

    private mutating func fail(_ error: HealthError, requestID: UInt32) -> [Action] {
        state = .closed
        var reply = ErrorReply(error)
        reply.closesConnection = true
        return [.write(encode(.error(reply), requestID: requestID)), .close(reason: error.message)]
    }

    /// Kinds a client may send as requests.
    static func isRequest(_ kind: MessageKind) -> Bool {
        switch kind {
        case .insert, .delete, .sampleQuery, .statisticsQuery, .collectionQuery, .changesQuery, .subscribe, .unsubscribe,
            .getSourcePriority, .setSourcePriority, .authorizationStatusQuery, .serverInfoQuery, .adminRequest:
            true
        default:
            false
        }
    }
}
