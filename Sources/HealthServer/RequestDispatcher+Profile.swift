import HealthEngine
import HealthModel
import HealthWire

extension RequestDispatcher {
    /// The reply to an authorized characteristics or activity summary request (HEALTHKIT.md §13).
    func profileReply(to message: Message) throws -> [Message] {
        switch message {
        case .characteristicsSet(let m):
            let result = try durable.setCharacteristics(subject: m.subject, m.entries)
            return [.characteristicsResult(CharacteristicsResult(entries: CharacteristicEntry.entries(of: result)))]
        case .characteristicsQuery(let m):
            try SampleRules.validate(subject: m.subject)
            let result = store.characteristics(subject: m.subject)
            return [.characteristicsResult(CharacteristicsResult(entries: CharacteristicEntry.entries(of: result)))]
        case .activitySummaryInsert(let m):
            let changed = try durable.insertActivitySummaries(subject: m.subject, m.summaries)
            return [
                .activitySummaryInsertAck(
                    ActivitySummaryInsertAck(
                        changed: UInt64(changed), unchanged: UInt64(m.summaries.count - changed)))
            ]
        case .activitySummaryQuery(let m):
            let summaries = try store.activitySummaries(subject: m.subject, from: m.first, through: m.last)
            return [.activitySummaryResult(ActivitySummaryResult(summaries: summaries))]
        default:
            throw HealthError(.invalidArgument, "\(message.kind) is not a characteristics or activity summary request")
        }
    }
}

extension IdentityAccess {
    /// Checks a characteristics or activity summary request (HEALTHKIT.md §10 with `characteristics` and
    /// `activitySummary` as types for grants): setting needs the share grant for the type (administrators may
    /// always), reading the read grant (HealthKit's characteristic query: there is no "own data" to fall back
    /// to); both need the subject. Throws ``ErrorCode/forbidden``.
    func checkProfileRequest(_ message: Message) throws {
        switch message {
        case .characteristicsSet(let m): try checkProfile(.characteristics, subject: m.subject, share: true)
        case .characteristicsQuery(let m): try checkProfile(.characteristics, subject: m.subject, share: false)
        case .activitySummaryInsert(let m): try checkProfile(.activitySummary, subject: m.subject, share: true)
        case .activitySummaryQuery(let m): try checkProfile(.activitySummary, subject: m.subject, share: false)
        default: break
        }
    }

    private func checkProfile(_ type: ProfileType, subject: String, share: Bool) throws {
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
