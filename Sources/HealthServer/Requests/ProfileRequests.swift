import HealthEngine
import HealthModel
import HealthWire

// Characteristics and activity summaries (HEALTHKIT.md §13), with `characteristics` and `activitySummary` as
// types for grants: setting needs the share grant (administrators may always), reading the read grant
// (HealthKit's characteristic query: there is no "own data" to fall back to); both need the subject.

extension CharacteristicsSet: ServedRequest {

    static func authorize(_ request: CharacteristicsSet, access: IdentityAccess, dispatcher: RequestDispatcher)
        throws -> Authorized<CharacteristicsSet>
    {
        try access.checkProfile(.characteristics, subject: request.subject, share: true)
        return .serve(request)
    }

    static func serve(_ request: CharacteristicsSet, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let result = try dispatcher.durable.setCharacteristics(subject: request.subject, request.entries)
        return [.characteristicsResult(CharacteristicsResult(entries: CharacteristicEntry.entries(of: result)))]
    }
}

extension CharacteristicsQuery: ServedRequest {

    static func authorize(_ request: CharacteristicsQuery, access: IdentityAccess, dispatcher: RequestDispatcher)
        throws -> Authorized<CharacteristicsQuery>
    {
        try access.checkProfile(.characteristics, subject: request.subject, share: false)
        return .serve(request)
    }

    static func serve(_ request: CharacteristicsQuery, dispatcher: RequestDispatcher, writer: UInt32) -> [Message] {
        let result = dispatcher.store.characteristics(subject: request.subject)
        return [.characteristicsResult(CharacteristicsResult(entries: CharacteristicEntry.entries(of: result)))]
    }
}

extension ActivitySummaryInsert: ServedRequest {

    static func authorize(_ request: ActivitySummaryInsert, access: IdentityAccess, dispatcher: RequestDispatcher)
        throws -> Authorized<ActivitySummaryInsert>
    {
        try access.checkProfile(.activitySummary, subject: request.subject, share: true)
        return .serve(request)
    }

    static func serve(_ request: ActivitySummaryInsert, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let changed = try dispatcher.durable.insertActivitySummaries(subject: request.subject, request.summaries)
        return [
            .activitySummaryInsertAck(
                ActivitySummaryInsertAck(
                    changed: UInt64(changed), unchanged: UInt64(request.summaries.count - changed)))
        ]
    }
}

extension ActivitySummaryQuery: ServedRequest {

    static func authorize(_ request: ActivitySummaryQuery, access: IdentityAccess, dispatcher: RequestDispatcher)
        throws -> Authorized<ActivitySummaryQuery>
    {
        try access.checkProfile(.activitySummary, subject: request.subject, share: false)
        return .serve(request)
    }

    static func serve(_ request: ActivitySummaryQuery, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let summaries = try dispatcher.store.activitySummaries(
            subject: request.subject, from: request.first, through: request.last)
        return [.activitySummaryResult(ActivitySummaryResult(summaries: summaries))]
    }
}

extension IdentityAccess {
    /// Throws ``ErrorCode/forbidden`` unless the identity may set (`share`) or read `type` of `subject`.
    func checkProfile(_ type: ProfileType, subject: String, share: Bool) throws {
        try checkSubject(subject)
        if isAdmin { return }
        let granted = grants.contains { grant in
            (grant.type == "*" || grant.type == type.identifier) && (share ? grant.share : grant.read)
        }
        guard granted else {
            throw HealthError(
                .forbidden, "identity \"\(name)\" has no \(share ? "share" : "read") permission for \(type.identifier)")
        }
    }
}
