import HealthEngine
import HealthModel
import HealthWire

extension RequestDispatcher {
    /// The reply to an authorized workout request (HEALTHKIT.md §13): inserts are marked as written by `writer`.
    func workoutReply(to message: Message, writer: UInt32) throws -> [Message] {
        switch message {
        case .workoutInsert(let m):
            let result = try durable.insertWorkouts(subject: m.subject, m.workouts, writer: writer)
            return [
                .workoutInsertAck(
                    WorkoutInsertAck(inserted: UInt64(result.inserted), duplicates: UInt64(result.duplicates)))
            ]
        case .workoutQuery(let m):
            let cap = UInt64(WorkoutInsert.maxWorkouts)
            let limit = m.limit == 0 ? cap : min(m.limit, cap)
            let result = try store.workouts.workouts(subject: m.subject, filter: m.filter, limit: Int(limit))
            return [
                .workoutResult(
                    WorkoutResult(
                        lastAnchor: result.lastAnchor, workouts: result.workouts.map { ($0.anchor, $0.workout) },
                        deleted: result.deletions.map { ($0.anchor, $0.uuid) }))
            ]
        case .workoutDelete(let m):
            let deleted = try durable.deleteWorkouts(subject: m.subject, uuids: m.uuids, writer: m.writer)
            return [.deleteAck(DeleteAck(deleted: UInt64(deleted)))]
        default:
            throw HealthError(.invalidArgument, "\(message.kind) is not a workout request")
        }
    }
}

extension IdentityAccess {
    /// A workout request as this identity may make it (HEALTHKIT.md §10 with the workout type for grants):
    /// inserts need the share grant for `workout` and the subject; deletes reach only the identity's own
    /// workouts (admins: any); queries without the read grant see only the identity's own workouts.
    func authorizedWorkoutRequest(_ message: Message) throws -> Message {
        switch message {
        case .workoutInsert(let m):
            try checkWorkoutShare(subject: m.subject)
            return message
        case .workoutQuery(var m):
            try checkSubject(m.subject)
            if !canReadWorkouts { m.filter.writer = id }
            return .workoutQuery(m)
        case .workoutDelete(var m):
            try checkWorkoutShare(subject: m.subject)
            if !isAdmin { m.writer = id }
            return .workoutDelete(m)
        default:
            return message
        }
    }

    /// Throws ``ErrorCode/forbidden`` unless the identity may write workouts for `subject`.
    func checkWorkoutShare(subject: String) throws {
        try checkSubject(subject)
        guard grants.contains(where: { $0.share && Self.coversWorkouts($0.type) }) else {
            throw HealthError(.forbidden, "identity \"\(name)\" has no share permission for \(WorkoutType.identifier)")
        }
    }

    /// Whether the identity may read every workout (not only its own).
    var canReadWorkouts: Bool { grants.contains { $0.read && Self.coversWorkouts($0.type) } }

    private static func coversWorkouts(_ grantType: String) -> Bool {
        grantType == "*" || grantType == WorkoutType.identifier
    }
}
