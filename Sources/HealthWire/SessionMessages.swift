import HealthCodec
import HealthModel

/// The protocol version this build speaks, in ``Hello`` and ``Welcome`` (the frame header's version byte, 1,
/// names the frame layout and is separate). Version 2 replaced the token in hello by a challenge-response.
public let protocolVersion: UInt8 = 2

/// First frame from the client: protocol version, and which token it will prove knowledge of. Nothing else is
/// accepted before it; the secret itself is never sent (see ``Challenge``, ``Proof``).
public struct Hello: WireMessage {
    public static let kind = MessageKind.hello
    public var protocolVersion: UInt8
    /// Free text naming the client program, for logs.
    public var clientName: String
    /// The id part of the client's token (its identity's id); 0 for a client without a token.
    public var tokenID: UInt32
    /// ``TokenAuthentication/nonceBytes`` fresh random bytes when ``tokenID`` is not 0; empty otherwise.
    public var clientNonce: [UInt8]

    public init(
        protocolVersion: UInt8 = HealthWire.protocolVersion, clientName: String, tokenID: UInt32, clientNonce: [UInt8]
    ) {
        self.protocolVersion = protocolVersion
        self.clientName = clientName
        self.tokenID = tokenID
        self.clientNonce = clientNonce
    }

    /// Encodes the hello; of another protocol version only the version byte (the fields of other versions
    /// are not this build's to write), mirroring the decoder.
    public func encode(into w: inout ByteWriter) {
        w.write(protocolVersion)
        guard protocolVersion == HealthWire.protocolVersion else { return }
        w.writeString(clientName)
        w.writeLE(tokenID)
        w.writeBlob(clientNonce)
    }

    /// Decodes a hello; of another protocol version only the version byte is read (the rest is skipped), so
    /// the server can answer `unsupportedVersion` rather than `malformedPayload`.
    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        protocolVersion = try r.readByte()
        guard protocolVersion == HealthWire.protocolVersion else {
            _ = try r.readBytes(r.remaining)
            (clientName, tokenID, clientNonce) = ("", 0, [])
            return
        }
        clientName = try r.readString(limits)
        tokenID = try r.readLE(UInt32.self)
        clientNonce = Array(try r.readBlob(limit: 255))
        let expected = tokenID == 0 ? 0 : TokenAuthentication.nonceBytes
        guard clientNonce.count == expected else {
            throw CodecError(
                .malformedPayload,
                "the client nonce has \(clientNonce.count) bytes; \(expected) are needed with token id \(tokenID)")
        }
    }
}

/// The server's answer to a ``Hello`` with a token id: a fresh nonce and the salt of the named identity (for an
/// unknown id a made-up salt, the same at every attempt, so known and unknown ids look alike).
public struct Challenge: WireMessage {
    public static let kind = MessageKind.challenge
    /// ``TokenAuthentication/mechanism``; no other value is defined.
    public var mechanism: UInt8
    /// ``TokenAuthentication/nonceBytes`` fresh bytes from the server's CSPRNG, new on every connection.
    public var serverNonce: [UInt8]
    /// The identity's salt, 16 to 64 bytes.
    public var salt: [UInt8]

    public init(mechanism: UInt8 = TokenAuthentication.mechanism, serverNonce: [UInt8], salt: [UInt8]) {
        self.mechanism = mechanism
        self.serverNonce = serverNonce
        self.salt = salt
    }

    public func encode(into w: inout ByteWriter) {
        w.write(mechanism)
        w.write(bytes: serverNonce)
        w.writeBlob(salt)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        mechanism = try r.readByte()
        guard mechanism == TokenAuthentication.mechanism else {
            throw CodecError(.malformedPayload, "unknown authentication mechanism \(mechanism)")
        }
        serverNonce = Array(try r.readBytes(TokenAuthentication.nonceBytes))
        salt = Array(try r.readBlob(limit: 255))
        guard TokenAuthentication.saltBytes.contains(salt.count) else {
            throw CodecError(.malformedPayload, "the salt has \(salt.count) bytes, not 16 to 64")
        }
    }
}

/// The client's answer to a ``Challenge``: ``TokenAuthentication/clientProof(saltedToken:authMessage:)``.
public struct Proof: WireMessage {
    public static let kind = MessageKind.proof
    /// 32 bytes: ClientKey XOR HMAC(StoredKey, AuthMessage).
    public var clientProof: [UInt8]

    public init(clientProof: [UInt8]) { self.clientProof = clientProof }

    public func encode(into w: inout ByteWriter) { w.write(bytes: clientProof) }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        clientProof = Array(try r.readBytes(TokenAuthentication.keyBytes))
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

/// The server's answer to ``Hello`` (or to ``Proof``): its version, who the client is, the limits it enforces,
/// and — after a challenge — its proof that it holds the token's verifier.
public struct Welcome: WireMessage {
    public static let kind = MessageKind.welcome
    public var protocolVersion: UInt8
    /// Server software name and version, e.g. `hkd 0.1.0`.
    public var serverVersion: String
    public var connectionID: UInt64
    /// The name of the identity the token belongs to.
    public var identity: String
    public var limits: SessionLimits
    /// HMAC(ServerKey, AuthMessage), 32 bytes, after a challenge; empty when there was none (no token, or
    /// `--auth off`). A client that presented a token refuses a welcome without the right one.
    public var serverSignature: [UInt8]

    public init(
        protocolVersion: UInt8 = HealthWire.protocolVersion, serverVersion: String, connectionID: UInt64,
        identity: String,
        limits: SessionLimits, serverSignature: [UInt8] = []
    ) {
        self.protocolVersion = protocolVersion
        self.serverVersion = serverVersion
        self.connectionID = connectionID
        self.identity = identity
        self.limits = limits
        self.serverSignature = serverSignature
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
        w.writeBlob(serverSignature)
    }

    public init(from r: inout ByteReader, limits l: MessageLimits) throws {
        protocolVersion = try r.readByte()
        serverVersion = try r.readString(l)
        connectionID = try r.readVarint()
        identity = try r.readString(l)
        limits = SessionLimits(
            maxFrameBytes: try r.readVarint(), maxInflatedBytes: try r.readVarint(), maxBatchRows: try r.readVarint(),
            maxPipelinedRequests: try r.readVarint(), idleTimeoutSeconds: try r.readVarint())
        serverSignature = Array(try r.readBlob(limit: 255))
        guard serverSignature.isEmpty || serverSignature.count == TokenAuthentication.keyBytes else {
            throw CodecError(.malformedPayload, "the server signature has \(serverSignature.count) bytes, not 0 or 32")
        }
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
