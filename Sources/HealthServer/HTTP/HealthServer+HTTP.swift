import HealthHTTP
import HealthModel
import HealthWire

extension HealthServer {
    /// The identity an HTTP request acts as: the one whose token its `Authorization: Bearer` header carries
    /// (``ErrorCode/unauthenticated`` without one, or for a wrong one); with `hkd --auth off`, an identity with
    /// no name that every request may act as.
    public func identity(authorization: String?) throws(HealthError) -> ClientIdentity {
        guard let identities else { return ClientIdentity(name: "") }
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            throw HealthError(.unauthenticated, "send the token as Authorization: Bearer hkd1_…")
        }
        return try identities.identity(
            presenting: String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces))
    }

    /// The reply messages to `message`, checked, placed, authorized and served for `identity` exactly as on the
    /// binary protocol (``RequestDispatcher/handle(_:identity:)``).
    public func answer(_ message: Message, as identity: ClientIdentity) -> [Message] {
        dispatcher.handle(message, identity: identity)
    }

    /// What a connection's `welcome` would say to `identity`.
    public func welcome(for identity: ClientIdentity) -> Welcome {
        Welcome(
            serverVersion: Self.version, connectionID: 0, identity: identity.name,
            limits: configuration.sessionLimits)
    }
}
