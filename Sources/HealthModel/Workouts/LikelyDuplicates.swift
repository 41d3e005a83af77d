import Foundation

/// Workouts that look like one workout written more than once: the same activity type, start, end and source
/// name (a companion app that synced the same run several times, each copy with its own creation date or app
/// version). HealthKit keeps each copy as an object of its own, and so does hkd; this names the copies so that a
/// listing can mark them and totals can count each group once, never hiding one.
public struct LikelyDuplicates: Sendable {
    /// What makes two workouts likely copies of one another.
    public struct Key: Hashable, Sendable {
        public var activityType: WorkoutActivityType
        public var start: Timestamp
        public var end: Timestamp
        public var sourceName: String

        /// The key of `workout`.
        public init(_ workout: Workout) {
            (activityType, start, end, sourceName) =
                (workout.activityType, workout.start, workout.end, workout.source.name)
        }
    }

    /// For each workout that repeats an earlier one of `workouts` (by the order given), the UUID of the first of
    /// its group.
    public let firstOfGroup: [UUID: UUID]

    /// The likely duplicates among `workouts`, the first of each group being the first in their order.
    public init(_ workouts: [Workout]) {
        var first: [Key: UUID] = [:]
        var repeats: [UUID: UUID] = [:]
        for workout in workouts {
            let key = Key(workout)
            if let earlier = first[key] {
                if earlier != workout.uuid { repeats[workout.uuid] = earlier }
            } else {
                first[key] = workout.uuid
            }
        }
        firstOfGroup = repeats
    }

    /// The first workout of the group `workout` repeats, `nil` when it is the first (or alone).
    public func repeated(by workout: Workout) -> UUID? { firstOfGroup[workout.uuid] }

    /// `workouts` with every repeat left out: each group once, as its first.
    public func distinct(_ workouts: [Workout]) -> [Workout] {
        workouts.filter { firstOfGroup[$0.uuid] == nil }
    }
}
