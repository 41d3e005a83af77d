import HealthEngine
import HealthModel
import HealthWire

// Workout routes (HEALTHKIT.md §13) are part of the workout type for grants (HealthKit authorises
// `HKSeriesType.workoutRoute()` on its own; hkd folds it into `workout`): inserts need the share grant for
// `workout`; queries without the read grant see only the identity's own routes.

extension RouteInsert: ServedRequest {

    static func authorize(_ request: RouteInsert, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<RouteInsert>
    {
        try access.checkWorkoutShare(subject: request.subject)
        return .serve(request)
    }

    static func serve(_ request: RouteInsert, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        let result = try dispatcher.durable.insertRoutes(subject: request.subject, request.routes, writer: writer)
        return [
            .routeInsertAck(RouteInsertAck(inserted: UInt64(result.inserted), duplicates: UInt64(result.duplicates)))
        ]
    }
}

extension RouteQuery: ServedRequest {

    static func authorize(_ request: RouteQuery, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<RouteQuery>
    {
        try access.checkSubject(request.subject)
        var narrowed = request
        if !access.canReadWorkouts { narrowed.writer = access.id }
        return .serve(narrowed)
    }

    /// The routes of stored workouts only (a deleted workout's routes are not shown).
    static func serve(_ request: RouteQuery, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        let store = dispatcher.store
        let found = try store.routes.objects(subject: request.subject, filter: request.filter).objects
        let workouts = try store.workouts.workouts(
            subject: request.subject, filter: WorkoutFilter(uuids: Set(found.map(\.object.workout)))
        ).workouts
        let stored = Set(workouts.map(\.workout.uuid))
        let shown = found.filter { stored.contains($0.object.workout) }
        return [
            .routeResult(
                RouteResult(
                    routes: shown.prefix(RouteInsert.maxRoutes).map { ($0.anchor, $0.object) },
                    more: shown.count > RouteInsert.maxRoutes))
        ]
    }
}
