import HealthEngine
import HealthModel
import HealthWire

// Changes since an anchor and live subscriptions (HEALTHKIT.md §9). Without the read grant an identity sees only
// its own added samples and deletion records.

extension ChangesQuery: SampleRead {

    /// Added samples in arrival order and deleted objects after the anchor, at most `limit` together (and at
    /// most one result frame's rows), and the anchor to continue from.
    static func serve(_ request: TypedRequest<ChangesQuery>, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let m = request.request
        let rows = dispatcher.rowsPerResultFrame
        let set = try dispatcher.store.changes(
            subject: m.subject, type: request.type, filter: m.filter, anchor: m.anchor,
            limit: m.limit == 0 ? rows : min(Int(clamping: m.limit), rows), unit: request.unit)
        return [.changesResult(ChangesResult(set, subject: m.subject))]
    }
}

extension Subscribe: ServedRequest {

    /// Narrowed here as well as by the connection (``RequestDispatcher/authorizedSubscription(_:identity:)``,
    /// before every update), so that no path carries an unchecked subscription.
    static func authorize(_ request: Subscribe, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<Subscribe>
    {
        var narrowed = request
        narrowed.request = try RequestDispatcher.narrow(request.request, access: access)
        return .serve(narrowed)
    }

    /// Subscriptions live on a connection (``ConnectionSubscriptions``), which serves them before dispatch.
    static func serve(_ request: Subscribe, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        throw HealthError(.unsupportedRequest, "subscribe needs a connection; a dispatcher alone cannot serve it")
    }
}

extension Unsubscribe: ServedRequest {

    /// Ends only a subscription of the same connection: nothing to check.
    static func authorize(_ request: Unsubscribe, access: IdentityAccess, dispatcher: RequestDispatcher)
        -> Authorized<Unsubscribe>
    {
        .serve(request)
    }

    /// Served by the connection, like ``Subscribe``.
    static func serve(_ request: Unsubscribe, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        throw HealthError(.unsupportedRequest, "unsubscribe needs a connection; a dispatcher alone cannot serve it")
    }
}
