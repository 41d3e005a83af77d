import HealthEngine
import HealthModel
import HealthWire

extension RequestDispatcher {
    /// The reply to an authorized route request (HEALTHKIT.md §13): inserts are marked as written by `writer`;
    /// a query reports the routes of stored workouts only (a deleted workout's routes are not shown).
    func routeReply(to message: Message, writer: UInt32) throws -> [Message] {
        switch message {
        case .routeInsert(let m):
            let result = try durable.insertRoutes(subject: m.subject, m.routes, writer: writer)
            return [
                .routeInsertAck(
                    RouteInsertAck(inserted: UInt64(result.inserted), duplicates: UInt64(result.duplicates)))
            ]
        case .routeQuery(let m):
            let found = try store.routes.objects(subject: m.subject, filter: m.filter).objects
            let workouts = try store.workouts.workouts(
                subject: m.subject, filter: WorkoutFilter(uuids: Set(found.map(\.object.workout)))
            ).workouts
            let stored = Set(workouts.map(\.workout.uuid))
            let shown = found.filter { stored.contains($0.object.workout) }
            return [
                .routeResult(
                    RouteResult(
                        routes: shown.prefix(RouteInsert.maxRoutes).map { ($0.anchor, $0.object) },
                        more: shown.count > RouteInsert.maxRoutes))
            ]
        default:
            throw HealthError(.invalidArgument, "\(message.kind) is not a route request")
        }
    }
}

extension IdentityAccess {
    /// A route request as this identity may make it: routes are part of the workout type for grants (HealthKit
    /// authorises `HKSeriesType.workoutRoute()` on its own; hkd folds it into `workout`). Inserts need the share
    /// grant for `workout`; queries without the read grant see only the identity's own routes.
    func authorizedRouteRequest(_ message: Message) throws -> Message {
        switch message {
        case .routeInsert(let m):
            try checkWorkoutShare(subject: m.subject)
            return message
        case .routeQuery(var m):
            try checkSubject(m.subject)
            if !canReadWorkouts { m.writer = id }
            return .routeQuery(m)
        default:
            return message
        }
    }
}
