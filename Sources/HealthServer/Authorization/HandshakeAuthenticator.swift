import HealthCodec
import HealthModel
import HealthPosix
import HealthWire

/// The server's side of authentication in the handshake: ``ConnectionStateMachine`` calls ``begin(_:payload:)``
/// for a hello of the right version and ``finish(_:proof:)`` for the proof answering a challenge.
///
/// Refusals throw ``HealthError`` (``ErrorCode/unauthenticated``, ``ErrorCode/tokenRevoked``…); the machine
/// sends them and closes.
public protocol HandshakeAuthenticator: Sendable {
    /// Accepts the client at once (``HandshakeStart/accepted(_:)``), or challenges it.
    func begin(_ hello: Hello, payload: [UInt8]) throws(HealthError) -> HandshakeStart
    /// Checks the proof; returns who the client is and the server signature for the welcome.
    func finish(_ pending: PendingAuthentication, proof: Proof) throws(HealthError) -> (
        ClientIdentity, serverSignature: [UInt8]
    )
}

/// What the server does after a hello.
public enum HandshakeStart: Sendable {
    /// The client is this identity; the welcome follows at once (no token needed, `--auth off`).
    case accepted(ClientIdentity)
    /// Send this challenge and wait for a proof.
    case challenge(Challenge, PendingAuthentication)
}

/// A challenge sent and not yet answered: what checking the proof needs.
public struct PendingAuthentication: Sendable, Equatable {
    /// The token id the hello named.
    public var tokenID: UInt32
    /// The identity's verifier (for an id no identity has, a made-up one no proof matches).
    public var verifier: TokenVerifier
    /// The hello and challenge payloads as sent, with their label (``TokenAuthentication/authMessage(helloPayload:challengePayload:)``).
    public var authMessage: [UInt8]

    public init(tokenID: UInt32, verifier: TokenVerifier, authMessage: [UInt8]) {
        self.tokenID = tokenID
        self.verifier = verifier
        self.authMessage = authMessage
    }
}

/// `--auth off`: everyone is the anonymous identity (id 0), token or not; the welcome carries no signature,
/// so a client holding a token refuses it (``ErrorCode/serverUnverified``).
public struct OpenAuthenticator: HandshakeAuthenticator {
    public init() {}

    public func begin(_ hello: Hello, payload: [UInt8]) throws(HealthError) -> HandshakeStart {
        .accepted(ClientIdentity(name: "anonymous"))
    }

    public func finish(_ pending: PendingAuthentication, proof: Proof) throws(HealthError) -> (
        ClientIdentity, serverSignature: [UInt8]
    ) {
        throw HealthError(.handshakeRequired, "no challenge was sent")
    }
}

/// `--auth required`: the challenge-response of ``TokenAuthentication`` against an ``IdentityRegistry``.
///
/// An unknown token id gets a challenge like a known one (the registry's stable made-up salt and verifier,
/// checked with the same work), so a client learns whether an id exists only by proving its token.
public struct TokenAuthenticator: HandshakeAuthenticator {
    public let registry: IdentityRegistry
    /// Fresh random bytes for server nonces; the system CSPRNG unless a test injects a seeded source.
    public let randomBytes: @Sendable (Int) throws -> [UInt8]

    public init(
        registry: IdentityRegistry,
        randomBytes: @escaping @Sendable (Int) throws -> [UInt8] = { try SecureRandom.bytes($0) }
    ) {
        self.registry = registry
        self.randomBytes = randomBytes
    }

    /// The refusal of every wrong proof, for known and unknown ids alike.
    static let invalid = HealthError(.unauthenticated, "the token is not valid")

    public func begin(_ hello: Hello, payload: [UInt8]) throws(HealthError) -> HandshakeStart {
        guard hello.tokenID != 0 else {
            throw HealthError(.unauthenticated, "this server requires a token (hkq --token or HKQ_TOKEN)")
        }
        let nonce: [UInt8]
        do {
            nonce = try randomBytes(TokenAuthentication.nonceBytes)
        } catch {
            throw HealthError(.internalError, "cannot draw a server nonce: \(error)")
        }
        let (salt, verifier) = registry.challengeMaterial(for: hello.tokenID)
        let challenge = Challenge(serverNonce: nonce, salt: salt)
        let authMessage = TokenAuthentication.authMessage(
            helloPayload: payload, challengePayload: challenge.encodedPayload())
        return .challenge(
            challenge, PendingAuthentication(tokenID: hello.tokenID, verifier: verifier, authMessage: authMessage))
    }

    public func finish(_ pending: PendingAuthentication, proof: Proof) throws(HealthError) -> (
        ClientIdentity, serverSignature: [UInt8]
    ) {
        guard pending.verifier.accepts(proof: proof.clientProof, authMessage: pending.authMessage) else {
            throw Self.invalid
        }
        // An unknown id cannot get here (its made-up verifier matches no proof); if it did, the lookup refuses it.
        let identity = try registry.identity(provenFor: pending.tokenID)
        return (identity, pending.verifier.serverSignature(authMessage: pending.authMessage))
    }
}

/// The server's authenticator with the ``FailureThrottle`` around it: every refusal (at hello or at the
/// proof) sets the connection's refusal delay, an accepted client resets its address.
struct ThrottledAuthenticator: HandshakeAuthenticator {
    let base: any HandshakeAuthenticator
    let throttle: FailureThrottle
    let peer: String
    let refusalDelay: RefusalDelay
    /// Counts each refusal (for `/metrics`).
    let failures: Counter

    func begin(_ hello: Hello, payload: [UInt8]) throws(HealthError) -> HandshakeStart {
        do throws(HealthError) {
            let start = try base.begin(hello, payload: payload)
            if case .accepted = start { throttle.succeeded(peer) }
            return start
        } catch {
            refusalDelay.delay = throttle.failed(peer)
            failures.add()
            ServerLog.warning("refused a hello from \(peer) (token id \(hello.tokenID)): \(error.message)")
            throw error
        }
    }

    func finish(_ pending: PendingAuthentication, proof: Proof) throws(HealthError) -> (
        ClientIdentity, serverSignature: [UInt8]
    ) {
        do throws(HealthError) {
            let result = try base.finish(pending, proof: proof)
            throttle.succeeded(peer)
            return result
        } catch {
            refusalDelay.delay = throttle.failed(peer)
            failures.add()
            ServerLog.warning("refused the proof from \(peer) (token id \(pending.tokenID)): \(error.message)")
            throw error
        }
    }
}
