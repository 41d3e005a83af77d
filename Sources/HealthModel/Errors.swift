/// Stable numeric error codes shared by the engine, the wire protocol and the client.
///
/// The numbers are part of the protocol (Protocol/PROTOCOL.md lists them all) and never change meaning.
/// Ranges: 1xx the frame or connection is broken (the server closes the connection), 2xx the request is
/// invalid (never retry it unchanged), 3xx authorization, 4xx a temporary condition (retrying can help),
/// 5xx a server fault.
public enum ErrorCode: UInt16, Sendable, CaseIterable, CustomStringConvertible {
    // 1xx: malformed input at the frame level; the connection is closed after the error frame.
    case malformedFrame = 100
    case unsupportedVersion = 101
    case frameTooLarge = 102
    case inflatedTooLarge = 103
    case unknownMessageKind = 104
    case handshakeRequired = 105
    case malformedPayload = 106
    case idleTimeout = 107
    /// The server speaks TLS and the client spoke plaintext (the server answers in plaintext, then closes; a
    /// client that gets a TLS record back to its plaintext hello reports it too).
    case tlsRequired = 108
    /// The client asked for TLS and the server speaks plaintext (either side may report it).
    case tlsUnavailable = 109
    /// The TLS handshake or a TLS record failed for another reason (protocol version, alert, corrupt record).
    case tlsFailed = 110

    // 2xx: the request is well-formed but invalid.
    case unknownQuantityType = 200
    case invalidUnit = 201
    case incompatibleUnit = 202
    case invalidSample = 203
    case invalidPredicate = 204
    case invalidOptions = 205
    case noData = 206
    case batchTooLarge = 207
    case invalidArgument = 208
    case uuidConflict = 209
    case unknownSubscription = 210
    case anchorExpired = 211
    case invalidTimeZone = 212
    case invalidInterval = 213
    /// A request kind this server version does not carry out yet (the spec defines it for later versions).
    case unsupportedRequest = 214

    // 3xx: authorization.
    case unauthenticated = 300
    case forbidden = 301
    case tokenRevoked = 302
    /// (client side) The server could not prove that it holds the token's verifier: a fake server, or one that
    /// did not issue the token. The client closes without sending anything more.
    case serverUnverified = 303
    /// (client side) The server's TLS certificate does not chain to a trusted authority.
    case certificateUntrusted = 304
    /// (client side) The server's TLS certificate is expired or not yet valid.
    case certificateExpired = 305
    /// (client side) The server's TLS certificate does not name the host connected to.
    case hostnameMismatch = 306
    /// (client side) The server's TLS certificate is not the pinned one (`--tls-fingerprint`).
    case fingerprintMismatch = 307
    /// The server refused the client's TLS certificate, or required one and got none (mutual TLS).
    case certificateRefused = 308

    // 4xx: temporary conditions; the same request may succeed later.
    case busy = 400
    case shuttingDown = 401
    case storageUnavailable = 402
    case tooManyConnections = 403
    case connectionLost = 404
    case timedOut = 405
    /// Cluster mode: another node owns the subject's partition; the message starts with that node's address
    /// (`HOST:PORT`), where the client sends the request again.
    case notOwner = 406

    // 5xx: server fault.
    case internalError = 500

    /// Whether sending the same request again can succeed.
    public var isRetryable: Bool { (400..<500).contains(rawValue) }

    /// Whether the server closes the connection after sending this error.
    public var closesConnection: Bool { (100..<200).contains(rawValue) }

    /// The name and number, e.g. `incompatibleUnit (202)`.
    public var description: String { "\(name) (\(rawValue))" }

    /// The lowerCamel name of the code, as the spec lists it.
    ///
    /// Spelled out rather than reflected: `String(describing:)` would call ``description`` and recurse.
    public var name: String {
        switch self {
        case .malformedFrame: "malformedFrame"
        case .unsupportedVersion: "unsupportedVersion"
        case .frameTooLarge: "frameTooLarge"
        case .inflatedTooLarge: "inflatedTooLarge"
        case .unknownMessageKind: "unknownMessageKind"
        case .handshakeRequired: "handshakeRequired"
        case .malformedPayload: "malformedPayload"
        case .idleTimeout: "idleTimeout"
        case .tlsRequired: "tlsRequired"
        case .tlsUnavailable: "tlsUnavailable"
        case .tlsFailed: "tlsFailed"
        case .unknownQuantityType: "unknownQuantityType"
        case .invalidUnit: "invalidUnit"
        case .incompatibleUnit: "incompatibleUnit"
        case .invalidSample: "invalidSample"
        case .invalidPredicate: "invalidPredicate"
        case .invalidOptions: "invalidOptions"
        case .noData: "noData"
        case .batchTooLarge: "batchTooLarge"
        case .invalidArgument: "invalidArgument"
        case .uuidConflict: "uuidConflict"
        case .unknownSubscription: "unknownSubscription"
        case .anchorExpired: "anchorExpired"
        case .invalidTimeZone: "invalidTimeZone"
        case .invalidInterval: "invalidInterval"
        case .unsupportedRequest: "unsupportedRequest"
        case .unauthenticated: "unauthenticated"
        case .forbidden: "forbidden"
        case .tokenRevoked: "tokenRevoked"
        case .serverUnverified: "serverUnverified"
        case .certificateUntrusted: "certificateUntrusted"
        case .certificateExpired: "certificateExpired"
        case .hostnameMismatch: "hostnameMismatch"
        case .fingerprintMismatch: "fingerprintMismatch"
        case .certificateRefused: "certificateRefused"
        case .busy: "busy"
        case .shuttingDown: "shuttingDown"
        case .storageUnavailable: "storageUnavailable"
        case .tooManyConnections: "tooManyConnections"
        case .connectionLost: "connectionLost"
        case .timedOut: "timedOut"
        case .notOwner: "notOwner"
        case .internalError: "internalError"
        }
    }

    /// The code whose ``name`` is `name`, if any (for command-line flags and config files).
    public init?(name: String) {
        guard let code = ErrorCode.allCases.first(where: { $0.name == name }) else { return nil }
        self = code
    }
}

/// An error with a stable code and a message that names the culprit.
///
/// Every layer (model validation, engine, server replies) reports problems with this type, so a client sees
/// the same code and message whether a check failed locally or on the server.
public struct HealthError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code; clients decide on retrying from it, never from the message.
    public var code: ErrorCode
    /// One line naming the culprit, e.g. `unit "kg" is not compatible with stepCount (count)`.
    public var message: String

    /// An error with `code` and `message`.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether sending the same request again can succeed.
    public var isRetryable: Bool { code.isRetryable }

    /// The message.
    public var description: String { message }
}
