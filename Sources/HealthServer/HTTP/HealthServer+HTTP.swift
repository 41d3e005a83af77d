import HealthCluster
import HealthHTTP
import HealthPosix
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

    /// Cluster mode: the HTTP API (`http://host:port`, `https://` with TLS) of the node that owns `subject`, when
    /// another node does and announced its HTTP address; `nil` when this node serves the subject, in single-node
    /// mode, and when no such node is known (the request then gets the error the binary protocol gives).
    public func httpOwner(of subject: String) -> String? {
        guard let cluster else { return nil }
        do {
            try cluster.checkServes(subject)
            return nil
        } catch let error as HealthError where error.code == .notOwner {
            return cluster.httpAddress(ofOwnerOf: subject).map { (usesTLS ? "https://" : "http://") + $0 }
        } catch {
            return nil
        }
    }

    /// What a connection's `welcome` would say to `identity`.
    public func welcome(for identity: ClientIdentity) -> Welcome {
        Welcome(
            serverVersion: Self.version, connectionID: 0, identity: identity.name,
            limits: configuration.sessionLimits)
    }
}
