import Foundation
import HealthModel
import HealthWire

// Workouts (HEALTHKIT.md §13): a store of their own on the server, the workout type for grants.

extension HealthClient {
    /// Adds workouts for `subject`: all or none; workouts already stored (same UUID, same content) are counted as
    /// duplicates, so a retry or a re-import adds nothing.
    public func insertWorkouts(_ workouts: [Workout], subject: String) async throws(HealthClientError)
        -> WorkoutInsertAck
    {
        try await send(WorkoutInsert(subject: subject, workouts: workouts))
    }

    /// HKSampleQuery on the workout type: `subject`'s workouts matching `filter`, by start, with their anchors.
    public func workouts(subject: String, filter: WorkoutFilter = WorkoutFilter(), limit: UInt64 = 0)
        async throws(HealthClientError) -> WorkoutResult
    {
        try await send(WorkoutQuery(subject: subject, filter: filter, limit: limit))
    }

    /// One workout by UUID, `nil` when there is none (or the caller may not read it).
    public func workout(_ uuid: UUID, subject: String) async throws(HealthClientError) -> Workout? {
        try await workouts(subject: subject, filter: WorkoutFilter(uuids: [uuid])).workouts.first?.workout
    }

    /// Deletes workouts by UUID; returns how many were deleted.
    public func deleteWorkouts(_ uuids: [UUID], subject: String) async throws(HealthClientError) -> UInt64 {
        try await send(WorkoutDelete(subject: subject, uuids: uuids)).deleted
    }

    /// The filter of `type`'s samples belonging to `workout` (``SampleFilter/objects(from:among:)``), from the
    /// type's sources on the server.
    public func filter(ofSamples type: String, in workout: Workout, subject: String) async throws(HealthClientError)
        -> SampleFilter
    {
        SampleFilter.objects(from: workout, among: try await sourcePriority(type, subject: subject))
    }
}

// Workout routes: their points, under the workout type's grants.

extension HealthClient {
    /// Adds workout routes for `subject` (at most ``RouteInsert/maxRoutes`` a request; this sends as many as it
    /// takes); routes already stored are counted as duplicates.
    public func insertRoutes(_ routes: [WorkoutRoute], subject: String) async throws(HealthClientError)
        -> RouteInsertAck
    {
        var total = RouteInsertAck(inserted: 0, duplicates: 0)
        var start = 0
        while start < routes.count {
            let end = min(start + RouteInsert.maxRoutes, routes.count)
            let ack = try await send(RouteInsert(subject: subject, routes: Array(routes[start..<end])))
            total.inserted += ack.inserted
            total.duplicates += ack.duplicates
            start = end
        }
        return total
    }

    /// The routes of `workout` (HKWorkoutRouteQuery), by their first point.
    public func routes(of workout: UUID, subject: String) async throws(HealthClientError) -> [WorkoutRoute] {
        try await send(RouteQuery(subject: subject, workouts: [workout])).routes.map(\.route)
    }
}
