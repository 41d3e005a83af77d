import HealthEngine
import HealthModel
import HealthWire

// Workouts (HEALTHKIT.md §13), with `workout` as the type for grants: inserts need its share grant and the
// subject; deletes reach only the identity's own workouts (admins: any); queries without the read grant see only
// the identity's own workouts.

extension WorkoutInsert: ServedRequest {

    static func authorize(_ request: WorkoutInsert, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<WorkoutInsert>
    {
        try access.checkWorkoutShare(subject: request.subject)
        return .serve(request)
    }

    static func serve(_ request: WorkoutInsert, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        let result = try dispatcher.durable.insertWorkouts(subject: request.subject, request.workouts, writer: writer)
        return [
            .workoutInsertAck(
                WorkoutInsertAck(inserted: UInt64(result.inserted), duplicates: UInt64(result.duplicates)))
        ]
    }
}

extension WorkoutQuery: ServedRequest {

    static func authorize(_ request: WorkoutQuery, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<WorkoutQuery>
    {
        try access.checkSubject(request.subject)
        var narrowed = request
        if !access.canReadWorkouts { narrowed.filter.writer = access.id }
        return .serve(narrowed)
    }

    static func serve(_ request: WorkoutQuery, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        let cap = UInt64(WorkoutInsert.maxWorkouts)
        let limit = request.limit == 0 ? cap : min(request.limit, cap)
        let result = try dispatcher.store.workouts.workouts(
            subject: request.subject, filter: request.filter, limit: Int(limit))
        return [
            .workoutResult(
                WorkoutResult(
                    lastAnchor: result.lastAnchor, workouts: result.workouts.map { ($0.anchor, $0.workout) },
                    deleted: result.deletions.map { ($0.anchor, $0.uuid) }))
        ]
    }
}

extension WorkoutDelete: ServedRequest {

    static func authorize(_ request: WorkoutDelete, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<WorkoutDelete>
    {
        try access.checkWorkoutShare(subject: request.subject)
        var narrowed = request
        if !access.isAdmin { narrowed.writer = access.id }
        return .serve(narrowed)
    }

    static func serve(_ request: WorkoutDelete, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        let deleted = try dispatcher.durable.deleteWorkouts(
            subject: request.subject, uuids: request.uuids, writer: request.writer)
        return [.deleteAck(DeleteAck(deleted: UInt64(deleted)))]
    }
}

extension IdentityAccess {
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
