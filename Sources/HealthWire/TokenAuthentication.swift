import HealthCodec
import HealthModel

/// The handshake's challenge-response over a token, after SCRAM-SHA-256 (RFC 5802, RFC 7677), adapted to
/// hkd's tokens (Protocol/PROTOCOL.md "Authentication" gives every byte):
///
/// ```
/// SaltedToken     = SHA-256(salt ‖ secret)                 (one iteration: the secret has 256 random bits)
/// ClientKey       = HMAC(SaltedToken, "Client Key")
/// StoredKey       = SHA-256(ClientKey)                      ┐ what the server stores
/// ServerKey       = HMAC(SaltedToken, "Server Key")         ┘
/// AuthMessage     = "hkd-auth-1" ‖ u32 len ‖ hello payload ‖ u32 len ‖ challenge payload
/// ClientProof     = ClientKey XOR HMAC(StoredKey, AuthMessage)
/// ServerSignature = HMAC(ServerKey, AuthMessage)
/// ```
///
/// The server checks `SHA-256(ClientProof XOR HMAC(StoredKey, AuthMessage)) == StoredKey`; the client checks
/// the server signature in `welcome`. Both nonces are in AuthMessage, so a proof is worth nothing on another
/// connection. Pure and thread-safe.
public enum TokenAuthentication {
    /// The challenge's mechanism byte for this scheme.
    public static let mechanism: UInt8 = 1
    /// Bytes in the client's and in the server's nonce.
    public static let nonceBytes = 32
    /// Bytes in a proof, a signature and every key.
    public static let keyBytes = 32
    /// Shortest and longest salt a challenge may carry.
    public static let saltBytes = 16...64
    /// The label AuthMessage starts with; a later scheme changes it.
    public static let authMessageLabel = Array("hkd-auth-1".utf8)

    /// `ClientKey = HMAC(SaltedToken, "Client Key")`.
    public static func clientKey(saltedToken: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(key: saltedToken, message: Array("Client Key".utf8))
    }

    /// `ServerKey = HMAC(SaltedToken, "Server Key")`.
    public static func serverKey(saltedToken: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(key: saltedToken, message: Array("Server Key".utf8))
    }

    /// The bytes both sides sign: the label, then the hello and challenge payloads exactly as sent, each after
    /// its length (u32 little-endian).
    public static func authMessage(helloPayload: [UInt8], challengePayload: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.write(bytes: authMessageLabel)
        w.writeLE(UInt32(clamping: helloPayload.count))
        w.write(bytes: helloPayload)
        w.writeLE(UInt32(clamping: challengePayload.count))
        w.write(bytes: challengePayload)
        return w.bytes
    }

    /// `ClientKey XOR HMAC(StoredKey, AuthMessage)`: what the client sends in ``Proof``.
    public static func clientProof(saltedToken: [UInt8], authMessage: [UInt8]) -> [UInt8] {
        let clientKey = clientKey(saltedToken: saltedToken)
        let signature = HMACSHA256.authenticationCode(key: SHA256.hash(clientKey), message: authMessage)
        return zip(clientKey, signature).map { $0 ^ $1 }
    }
}

/// What a server keeps per identity to check proofs and sign welcomes: StoredKey and ServerKey. Neither lets
/// anyone compute a proof without seeing a handshake (SECURITY.md says what a stolen verifier allows).
public struct TokenVerifier: Hashable, Sendable {
    /// `SHA-256(ClientKey)`.
    public var storedKey: [UInt8]
    /// `HMAC(SaltedToken, "Server Key")`.
    public var serverKey: [UInt8]

    public init(storedKey: [UInt8], serverKey: [UInt8]) {
        self.storedKey = storedKey
        self.serverKey = serverKey
    }

    /// The verifier of a salted token (``AccessToken/saltedToken(secret:salt:)``).
    public init(saltedToken: [UInt8]) {
        storedKey = SHA256.hash(TokenAuthentication.clientKey(saltedToken: saltedToken))
        serverKey = TokenAuthentication.serverKey(saltedToken: saltedToken)
    }

    /// Whether `proof` shows knowledge of ClientKey for this AuthMessage; constant time in the proof's bytes.
    public func accepts(proof: [UInt8], authMessage: [UInt8]) -> Bool {
        guard proof.count == TokenAuthentication.keyBytes else { return false }
        let signature = HMACSHA256.authenticationCode(key: storedKey, message: authMessage)
        let clientKey = zip(proof, signature).map { $0 ^ $1 }
        return HMACSHA256.constantTimeEqual(SHA256.hash(clientKey), storedKey)
    }

    /// `HMAC(ServerKey, AuthMessage)`: what the server sends in ``Welcome``.
    public func serverSignature(authMessage: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(key: serverKey, message: authMessage)
    }
}

/// The client's side of the handshake, free of sockets: the hello to send, the proof answering the server's
/// challenge, and the check of the server's welcome. `HealthConnection` drives it; tests can too.
public struct ClientHandshake: Sendable {
    /// The first frame's message.
    public let hello: Hello
    private let token: AccessToken?
    private let helloPayload: [UInt8]
    /// Set once a challenge was answered: the signature the welcome must carry.
    private var expectedSignature: [UInt8]?

    /// A handshake presenting `token` (empty: none). `nonce` must be ``TokenAuthentication/nonceBytes`` fresh
    /// bytes from a CSPRNG when there is a token. Throws ``ErrorCode/unauthenticated`` for text that is not
    /// shaped like a token: nothing is sent then.
    public init(clientName: String, token text: String, nonce: [UInt8]) throws(HealthError) {
        if text.isEmpty {
            token = nil
            hello = Hello(clientName: clientName, tokenID: 0, clientNonce: [])
        } else {
            guard let parsed = AccessToken(text) else {
                throw HealthError(
                    .unauthenticated,
                    "the token is not shaped like an hkd token (hkd1_<8 hex digits>_<64 hex digits>); nothing was sent")
            }
            guard nonce.count == TokenAuthentication.nonceBytes else {
                throw HealthError(
                    .internalError, "the client nonce has \(nonce.count) bytes, not \(TokenAuthentication.nonceBytes)")
            }
            token = parsed
            hello = Hello(clientName: clientName, tokenID: parsed.identityID, clientNonce: nonce)
        }
        helloPayload = hello.encodedPayload()
    }

    /// The proof answering `challenge`, whose payload arrived as `challengePayload` (the frame's payload).
    /// Throws ``ErrorCode/unauthenticated`` when this handshake has no token (the server requires one).
    public mutating func respond(to challenge: Challenge, payload challengePayload: [UInt8]) throws(HealthError)
        -> Proof
    {
        guard let token else {
            throw HealthError(.unauthenticated, "this server requires a token (hkq --token or HKQ_TOKEN)")
        }
        guard expectedSignature == nil else {
            throw HealthError(.serverUnverified, "the server sent a second challenge")
        }
        let salted = AccessToken.saltedToken(secret: token.secret, salt: challenge.salt)
        let authMessage = TokenAuthentication.authMessage(
            helloPayload: helloPayload, challengePayload: challengePayload)
        expectedSignature = TokenVerifier(saltedToken: salted).serverSignature(authMessage: authMessage)
        return Proof(clientProof: TokenAuthentication.clientProof(saltedToken: salted, authMessage: authMessage))
    }

    /// Accepts `welcome` only when it proves the server holds this token's verifier (or, without a token,
    /// when it claims nothing). Throws ``ErrorCode/serverUnverified`` otherwise: the caller must close the
    /// connection without sending anything more.
    public func check(_ welcome: Welcome) throws(HealthError) {
        guard token != nil else { return }
        guard let expectedSignature else {
            throw HealthError(
                .serverUnverified,
                "the server accepted the connection without proving that it knows the token (a server with --auth off, "
                    + "or not the hkd that issued the token); connect without a token to an --auth off server")
        }
        guard HMACSHA256.constantTimeEqual(welcome.serverSignature, expectedSignature) else {
            throw HealthError(
                .serverUnverified,
                "the server's signature is wrong: it does not hold this token's verifier (not the hkd that issued the token)"
            )
        }
    }
}
