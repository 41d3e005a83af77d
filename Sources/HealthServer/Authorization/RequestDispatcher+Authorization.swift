import HealthEngine
import HealthModel
import HealthWire

extension RequestDispatcher {
    /// `request` as `identity` may watch it (its filter narrowed by ``IdentityAccess/readFilter(_:subject:type:)``,
    /// so every update is computed with the subscriber's filter); unchanged with `hkd --auth off`. Throws
    /// ``ErrorCode/forbidden`` for a subject outside the identity's, and the registry's errors for a revoked or
    /// deleted identity. Called at subscribe time and again before every update, so grant changes apply at once.
    /// In cluster mode it first throws ``ErrorCode/notOwner`` unless this node serves the subject: a subscription
    /// lives where its subject's changes are applied.
    func authorizedSubscription(_ request: SubscriptionRequest, identity: ClientIdentity) throws -> SubscriptionRequest
    {
        if let placement { try placement(request.subject) }
        guard let identities else { return request }
        return try RequestDispatcher.narrow(request, access: identities.access(for: identity))
    }

    /// `request` with the filter of the query it wraps narrowed to what `access` may read.
    static func narrow(_ request: SubscriptionRequest, access: IdentityAccess) throws -> SubscriptionRequest {
        switch request {
        case .observer(let subject, let type, let filter):
            let narrowed = try access.readFilter(filter, subject: subject, type: QuantityType.named(type))
            return .observer(subject: subject, type: type, filter: narrowed)
        case .anchored(var query):
            query.filter = try access.readFilter(
                query.filter, subject: query.subject, type: QuantityType.named(query.type))
            return .anchored(query)
        case .collection(var query):
            query.filter = try access.readFilter(
                query.filter, subject: query.subject, type: QuantityType.named(query.type))
            return .collection(query)
        }
    }
}
