import HealthEngine
import HealthModel
import HealthWire

extension RequestDispatcher {
    /// The reply to an authorized correlation request (HEALTHKIT.md §13): inserts are marked as written by
    /// `writer`.
    func correlationReply(to message: Message, writer: UInt32) throws -> [Message] {
        switch message {
        case .correlationInsert(let m):
            let result = try durable.insertCorrelations(subject: m.subject, m.correlations, writer: writer)
            return [
                .correlationInsertAck(
                    CorrelationInsertAck(inserted: UInt64(result.inserted), duplicates: UInt64(result.duplicates)))
            ]
        case .correlationQuery(let m):
            let cap = UInt64(CorrelationInsert.maxCorrelations)
            let limit = m.limit == 0 ? cap : min(m.limit, cap)
            let result = try store.correlations.correlations(subject: m.subject, filter: m.filter, limit: Int(limit))
            return [
                .correlationResult(
                    CorrelationResult(
                        lastAnchor: result.lastAnchor, correlations: result.objects.map { ($0.anchor, $0.object) },
                        deleted: result.deletions.map { ($0.anchor, $0.uuid) }))
            ]
        case .correlationDelete(let m):
            let deleted = try durable.deleteCorrelations(subject: m.subject, uuids: m.uuids, writer: m.writer)
            return [.deleteAck(DeleteAck(deleted: UInt64(deleted)))]
        default:
            throw HealthError(.invalidArgument, "\(message.kind) is not a correlation request")
        }
    }
}

extension IdentityAccess {
    /// A correlation request as this identity may make it. Correlation types are authorised through their member
    /// quantity types, as in HealthKit (HEALTHKIT.md §13): a grant covers a correlation type when it names `*`,
    /// the correlation type itself (`bloodPressure`, `food`), or when the identity holds that grant for every
    /// member type (blood pressure: systolic and diastolic). Inserts need the share grant for each type they
    /// hold; deletes a share grant for some correlation type and reach only the identity's own correlations
    /// (admins: any). A query reports the types the identity may read in full; when it may read none of those
    /// asked for, it sees only its own correlations (and deletions).
    func authorizedCorrelationRequest(_ message: Message) throws -> Message {
        switch message {
        case .correlationInsert(let m):
            try checkSubject(m.subject)
            for type in Set(m.correlations.map(\.type)) where !covers(type, share: true) {
                throw HealthError(.forbidden, "identity \"\(name)\" has no share permission for \(type.rawValue)")
            }
            return message
        case .correlationQuery(var m):
            try checkSubject(m.subject)
            let asked = m.filter.types.isEmpty ? Set(CorrelationType.allCases) : m.filter.types
            let readable = asked.filter { covers($0, share: false) }
            if readable.isEmpty {
                m.filter.writer = id
            } else if readable != asked {
                m.filter.types = readable
            }
            return .correlationQuery(m)
        case .correlationDelete(var m):
            try checkSubject(m.subject)
            guard CorrelationType.allCases.contains(where: { covers($0, share: true) }) else {
                throw HealthError(.forbidden, "identity \"\(name)\" has no share permission for any correlation type")
            }
            if !isAdmin { m.writer = id }
            return .correlationDelete(m)
        default:
            return message
        }
    }

    /// Whether the identity's share (or read) grants cover correlations of `type` (see
    /// ``authorizedCorrelationRequest(_:)``).
    func covers(_ type: CorrelationType, share: Bool) -> Bool {
        let granted = { (name: String) in
            grants.contains { ($0.type == "*" || $0.type == name) && (share ? $0.share : $0.read) }
        }
        return granted(type.rawValue) || type.members.allSatisfy { granted($0.identifier) }
    }
}
