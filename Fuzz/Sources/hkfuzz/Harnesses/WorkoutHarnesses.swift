import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthStorage

/// Workouts (HEALTHKIT.md §13): the shared workout layout and the workout snapshot file.
enum WorkoutHarnesses {
    /// A run with every field set, and a bare walk.
    static let workouts: [Workout] = [
        Workout(
            activityType: .running, start: 1_700_000_000_000_000, end: 1_700_001_800_000_000,
            duration: 1_700_000_000, totalEnergyBurned: WorkoutTotal(value: 338, unit: "kcal"),
            totalDistance: WorkoutTotal(value: 4.2, unit: "km"), source: SourceInfo(name: "Watch", device: "Watch6,2"),
            metadata: ["HKIndoorWorkout": .number(0)],
            events: [
                WorkoutEvent(kind: .pause, date: 1_700_000_600_000_000),
                WorkoutEvent(kind: .segment, date: 1_700_000_000_000_000, duration: 600_000_000),
            ],
            statistics: [
                WorkoutStatistic(
                    type: "HKQuantityTypeIdentifierHeartRate", start: 1_700_000_000_000_000,
                    end: 1_700_001_800_000_000, average: 151, maximum: 176, unit: "count/min")
            ],
            routes: ["/workout-routes/route.gpx"]),
        Workout(activityType: .walking, start: 0, end: 60_000_000, source: SourceInfo(name: "Phone")),
    ]

    /// A workout as the protocol and the log write it: if it decodes, its encoding decodes to the same bytes.
    static let workout = ObjectHarnesses.layout(
        "workout", "ByteReader.readWorkout (the protocol's, log's and snapshot's workout layout); round trip", workouts)

    /// Byte 0 bit 0 asks for the trailing CRC to be computed; the rest is a workout snapshot, which must
    /// re-encode to a file that decodes to the same bytes, and restore into a store or be refused.
    static let snapshot = ObjectHarnesses.snapshot(
        "workout-snapshot", "WorkoutSnapshotCodec.decode (CRC fixed when byte 0 is odd), re-encode, restore", workouts)
}
