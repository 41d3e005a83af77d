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
    /// Requests dispatched and not yet completed.
    public private(set) var inFlight = 0

    public init(limits: SessionLimits, serverVersion: String, connectionID: UInt64, authenticator: any HandshakeAuthenticator) {
        self.limits = limits
        self.serverVersion = serverVersion
        self.connectionID = connectionID
        self.authenticator = authenticator
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
            return handshake(hello, payload: frame.payload, requestID: frame.requestID)
        case .awaitingProof(let pending):
            guard case .proof(let proof) = message else {
                return fail(HealthError(.handshakeRequired, "the answer to challenge must be proof, not \(frame.kind)"), requestID: frame.requestID)
            }
            return complete(pending, proof: proof, requestID: frame.requestID)
        case .established(let identity):
            switch message {
            case .hello, .proof:
                return fail(HealthError(.handshakeRequired, "\(frame.kind) is only part of the handshake, which is over"), requestID: frame.requestID)
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

    private mutating func handshake(_ hello: Hello, payload: [UInt8], requestID: UInt32) -> [Action] {
        guard hello.protocolVersion == protocolVersion else {
            return fail(
                HealthError(.unsupportedVersion, "protocol version \(hello.protocolVersion) is not supported; this server speaks \(protocolVersion)"),
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

    private mutating func establish(_ identity: ClientIdentity, serverSignature: [UInt8], requestID: UInt32) -> [Action] {
        state = .established(identity)
        decoder.limits = limits.frameLimits
        let welcome = Welcome(
            serverVersion: serverVersion, connectionID: connectionID, identity: identity.name, limits: limits,
            serverSignature: serverSignature)
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
