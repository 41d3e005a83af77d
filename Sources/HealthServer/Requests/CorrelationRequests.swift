import HealthEngine
import HealthModel
import HealthWire

// Correlations (HEALTHKIT.md §13) are authorised through their member quantity types, as in HealthKit: a grant
// covers a correlation type when it names `*`, the correlation type itself (`bloodPressure`, `food`), or when the
// identity holds that grant for every member type (blood pressure: systolic and diastolic).

extension CorrelationInsert: ServedRequest {

    /// Needs the share grant for each type the request holds.
    static func authorize(_ request: CorrelationInsert, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<CorrelationInsert>
    {
        try access.checkSubject(request.subject)
        for type in Set(request.correlations.map(\.type)) where !access.covers(type, share: true) {
            throw HealthError(.forbidden, "identity \"\(access.name)\" has no share permission for \(type.rawValue)")
        }
        return .serve(request)
    }

    static func serve(_ request: CorrelationInsert, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let result = try dispatcher.durable.insertCorrelations(
            subject: request.subject, request.correlations, writer: writer)
        return [
            .correlationInsertAck(
                CorrelationInsertAck(inserted: UInt64(result.inserted), duplicates: UInt64(result.duplicates)))
        ]
    }
}

extension CorrelationQuery: ServedRequest {

    /// Reports the types the identity may read in full; when it may read none of those asked for, it sees only
    /// its own correlations (and deletions).
    static func authorize(_ request: CorrelationQuery, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<CorrelationQuery>
    {
        try access.checkSubject(request.subject)
        var narrowed = request
        let asked = request.filter.types.isEmpty ? Set(CorrelationType.allCases) : request.filter.types
        let readable = asked.filter { access.covers($0, share: false) }
        if readable.isEmpty {
            narrowed.filter.writer = access.id
        } else if readable != asked {
            narrowed.filter.types = readable
        }
        return .serve(narrowed)
    }

    static func serve(_ request: CorrelationQuery, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let cap = UInt64(CorrelationInsert.maxCorrelations)
        let limit = request.limit == 0 ? cap : min(request.limit, cap)
        let result = try dispatcher.store.correlations.correlations(
            subject: request.subject, filter: request.filter, limit: Int(limit))
        return [
            .correlationResult(
                CorrelationResult(
                    lastAnchor: result.lastAnchor, correlations: result.objects.map { ($0.anchor, $0.object) },
                    deleted: result.deletions.map { ($0.anchor, $0.uuid) }))
        ]
    }
}

extension CorrelationDelete: ServedRequest {

    /// Needs a share grant for some correlation type; reaches only the identity's own correlations (admins: any).
    static func authorize(_ request: CorrelationDelete, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<CorrelationDelete>
    {
        try access.checkSubject(request.subject)
        guard CorrelationType.allCases.contains(where: { access.covers($0, share: true) }) else {
            throw HealthError(
                .forbidden, "identity \"\(access.name)\" has no share permission for any correlation type")
        }
        var narrowed = request
        if !access.isAdmin { narrowed.writer = access.id }
        return .serve(narrowed)
    }

    static func serve(_ request: CorrelationDelete, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let deleted = try dispatcher.durable.deleteCorrelations(
            subject: request.subject, uuids: request.uuids, writer: request.writer)
        return [.deleteAck(DeleteAck(deleted: UInt64(deleted)))]
    }
}

extension IdentityAccess {
    /// Whether the identity's share (or read) grants cover correlations of `type`.
    func covers(_ type: CorrelationType, share: Bool) -> Bool {
        let granted = { (name: String) in
            grants.contains { ($0.type == "*" || $0.type == name) && (share ? $0.share : $0.read) }
        }
        return granted(type.rawValue) || type.members.allSatisfy { granted($0.identifier) }
    }
}
