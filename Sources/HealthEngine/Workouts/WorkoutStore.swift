import Foundation
import HealthModel

/// The workouts of every subject (HEALTHKIT.md §13): ``HealthStore/workouts``.
public typealias WorkoutStore = ObjectStore<Workout>
/// A workout as stored, with its anchor and writer.
public typealias StoredWorkout = StoredObject<Workout>
/// A deleted workout, for changes since an anchor.
public typealias WorkoutDeletion = ObjectDeletion
/// What a workout query found.
public typealias WorkoutQueryResult = ObjectQueryResult<Workout>
/// Everything the workout store holds, for a snapshot and back (Protocol/STORAGE.md, "Workout snapshot").
public typealias WorkoutImage = ObjectImage<Workout>

extension Workout: StorableObject {
    public typealias Filter = WorkoutFilter
    public static var objectName: String { "workout" }
    public var conflictDescription: String { "\(activityType) at \(start)" }
}

extension WorkoutFilter: ObjectFilter {}

extension StoredObject where Object == Workout {
    /// A stored workout from its parts.
    public init(workout: Workout, anchor: UInt64, writer: UInt32) {
        self.init(object: workout, anchor: anchor, writer: writer)
    }

    public var workout: Workout { object }
}

extension ObjectQueryResult where Object == Workout {
    /// A result from its parts.
    public init(workouts: [StoredWorkout], deletions: [WorkoutDeletion], lastAnchor: UInt64) {
        self.init(objects: workouts, deletions: deletions, lastAnchor: lastAnchor)
    }

    /// The workouts found, by start then UUID.
    public var workouts: [StoredWorkout] { objects }
}

extension ObjectImage where Object == Workout {
    /// Workouts in the image.
    public var workoutCount: Int { objectCount }
}

extension ObjectStore where Object == Workout {
    /// `subject`'s workouts matching `filter` (see ``objects(subject:filter:limit:)``).
    public func workouts(subject: String, filter: WorkoutFilter = WorkoutFilter(), limit: Int = 0) throws
        -> WorkoutQueryResult
    {
        try objects(subject: subject, filter: filter, limit: limit)
    }
}
