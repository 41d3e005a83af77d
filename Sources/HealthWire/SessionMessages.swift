import HealthCodec
import HealthModel

/// The protocol version this build speaks.
public let protocolVersion: UInt8 = 1

/// First frame from the client: protocol version and credentials. Nothing else is accepted before it.
public struct Hello: WireMessage {
    public static let kind = MessageKind.hello
    public var protocolVersion: UInt8
    /// Free text naming the client program, for logs.
    public var clientName: String
    /// The identity's secret token; empty for none.
    public var token: String

    public init(protocolVersion: UInt8 = HealthWire.protocolVersion, clientName: String, token: String) {
        self.protocolVersion = protocolVersion
        self.clientName = clientName
        self.token = token
    }

    public func encode(into w: inout ByteWriter) {
        w.write(protocolVersion)
        w.writeString(clientName)
        w.writeString(token)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        protocolVersion = try r.readByte()
        clientName = try r.readString(limits)
        token = try r.readString(limits)
    }
}

/// What a server promises to accept on this connection, announced in ``Welcome``.
public struct SessionLimits: Hashable, Sendable {
    /// Largest frame payload on the wire, in bytes.
    public var maxFrameBytes: UInt64
    /// Largest payload after inflating, in bytes.
    public var maxInflatedBytes: UInt64
    /// Most rows in one insert batch.
    public var maxBatchRows: UInt64
    /// Most requests a client may have in flight before the server stops reading from it.
    public var maxPipelinedRequests: UInt64
    /// Seconds of silence after which the server closes the connection (0: never).
    public var idleTimeoutSeconds: UInt64

    public init(
        maxFrameBytes: UInt64, maxInflatedBytes: UInt64, maxBatchRows: UInt64, maxPipelinedRequests: UInt64,
        idleTimeoutSeconds: UInt64
    ) {
        self.maxFrameBytes = maxFrameBytes
        self.maxInflatedBytes = maxInflatedBytes
        self.maxBatchRows = maxBatchRows
        self.maxPipelinedRequests = maxPipelinedRequests
        self.idleTimeoutSeconds = idleTimeoutSeconds
    }

    /// The frame limits these session limits imply.
    public var frameLimits: FrameLimits {
        FrameLimits(maxFrameBytes: Int(clamping: maxFrameBytes), maxInflatedBytes: Int(clamping: maxInflatedBytes))
    }
}

/// The server's answer to ``Hello``: its version, who the client is, and the limits it enforces.
public struct Welcome: WireMessage {
    public static let kind = MessageKind.welcome
    public var protocolVersion: UInt8
    /// Server software name and version, e.g. `hkd 0.1.0`.
    public var serverVersion: String
    public var connectionID: UInt64
    /// The name of the identity the token belongs to.
    public var identity: String
    public var limits: SessionLimits

    public init(protocolVersion: UInt8 = HealthWire.protocolVersion, serverVersion: String, connectionID: UInt64, identity: String, limits: SessionLimits) {
        self.protocolVersion = protocolVersion
        self.serverVersion = serverVersion
        self.connectionID = connectionID
        self.identity = identity
        self.limits = limits
    }

    public func encode(into w: inout ByteWriter) {
        w.write(protocolVersion)
        w.writeString(serverVersion)
        w.writeVarint(connectionID)
        w.writeString(identity)
        w.writeVarint(limits.maxFrameBytes)
        w.writeVarint(limits.maxInflatedBytes)
        w.writeVarint(limits.maxBatchRows)
        w.writeVarint(limits.maxPipelinedRequests)
        w.writeVarint(limits.idleTimeoutSeconds)
    }

    public init(from r: inout ByteReader, limits l: MessageLimits) throws {
        protocolVersion = try r.readByte()
        serverVersion = try r.readString(l)
        connectionID = try r.readVarint()
        identity = try r.readString(l)
        limits = SessionLimits(
            maxFrameBytes: try r.readVarint(), maxInflatedBytes: try r.readVarint(), maxBatchRows: try r.readVarint(),
            maxPipelinedRequests: try r.readVarint(), idleTimeoutSeconds: try r.readVarint())
    }
}

/// An error reply: a stable code, whether retrying can help, and a message naming the problem.
///
/// The frame's request id names the request that failed (0 for a connection-level error).
public struct ErrorReply: WireMessage, Error {
    public static let kind = MessageKind.error
    /// An ``ErrorCode`` raw value; unknown codes from newer servers are kept as numbers.
    public var code: UInt16
    public var retryable: Bool
    /// Whether the sender closes the connection after this frame.
    public var closesConnection: Bool
    public var message: String

    public init(code: UInt16, retryable: Bool, closesConnection: Bool, message: String) {
        self.code = code
        self.retryable = retryable
        self.closesConnection = closesConnection
        self.message = message
    }

    /// The reply for a ``HealthError``.
    public init(_ error: HealthError) {
        self.init(
            code: error.code.rawValue, retryable: error.code.isRetryable, closesConnection: error.code.closesConnection,
            message: error.message)
    }

    /// The error as a ``HealthError``; unknown codes become ``ErrorCode/internalError``.
    public var healthError: HealthError { HealthError(ErrorCode(rawValue: code) ?? .internalError, message) }

    public func encode(into w: inout ByteWriter) {
        w.writeLE(code)
        w.write((retryable ? 1 : 0) | (closesConnection ? 2 : 0))
        w.writeString(message)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        code = try r.readLE(UInt16.self)
        let flags = try r.readByte()
        guard flags & ~0b11 == 0 else { throw CodecError(.malformedPayload, "unknown error flag bits 0x\(hex(flags))") }
        retryable = flags & 1 != 0
        closesConnection = flags & 2 != 0
        message = try r.readString(limits)
    }
}

/// A liveness check; the peer answers with ``Pong`` carrying the same nonce.
public struct Ping: WireMessage {
    public static let kind = MessageKind.ping
    public var nonce: UInt64
    public init(nonce: UInt64) { self.nonce = nonce }
    public func encode(into w: inout ByteWriter) { w.writeLE(nonce) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws { nonce = try r.readLE(UInt64.self) }
}

/// The answer to ``Ping``.
public struct Pong: WireMessage {
    public static let kind = MessageKind.pong
    public var nonce: UInt64
    public init(nonce: UInt64) { self.nonce = nonce }
    public func encode(into w: inout ByteWriter) { w.writeLE(nonce) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws { nonce = try r.readLE(UInt64.self) }
}
