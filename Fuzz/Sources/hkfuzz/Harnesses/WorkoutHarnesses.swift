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
    static let workout = Harness(
        "workout", "ByteReader.readWorkout (the protocol's, log's and snapshot's workout layout); round trip",
        seeds: {
            workouts.map { workout in
                var writer = ByteWriter()
                writer.writeWorkout(workout)
                return writer.bytes
            }
        }
    ) { input in
        var reader = ByteReader(input.rest())
        guard let workout = attempt({ try reader.readWorkout(FieldCaps.storage) }) else { return }
        var writer = ByteWriter()
        writer.writeWorkout(workout)
        var again = ByteReader(writer.bytes)
        guard let decoded = attempt({ try again.readWorkout(FieldCaps.storage) }) else {
            require(false, "a re-encoded workout does not decode")
            return
        }
        var check = ByteWriter()
        check.writeWorkout(decoded)
        require(check.bytes == writer.bytes, "workout round trip differs")
        _ = attempt { try workout.validate() }
    }

    /// Byte 0 bit 0 asks for the trailing CRC to be computed; the rest is a workout snapshot, which must
    /// re-encode to a file that decodes to the same bytes, and restore into a store or be refused.
    static let snapshot = Harness(
        "workout-snapshot", "WorkoutSnapshotCodec.decode (CRC fixed when byte 0 is odd), re-encode, restore",
        seeds: {
            let store = WorkoutStore()
            _ = try? store.insert(subject: "anna", workouts, writer: 2)
            _ = try? store.delete(subject: "anna", uuids: [workouts[1].uuid])
            let bytes = WorkoutSnapshotCodec.encode(store.image { 9 }.0, sequence: 9)
            return [[0] + bytes, [1] + bytes.dropLast(4)]
        }
    ) { input in
        let control = input.byte()
        let bytes = control & 1 != 0 ? StorageHarnesses.withChecksum(input.rest()) : input.rest()
        guard let decoded = attempt({ try WorkoutSnapshotCodec.decode(bytes) }) else { return }
        let encoded = WorkoutSnapshotCodec.encode(decoded.image, sequence: decoded.sequence)
        guard let again = attempt({ try WorkoutSnapshotCodec.decode(encoded) }) else {
            require(false, "a decoded workout snapshot re-encodes to a file that does not decode")
            return
        }
        require(
            WorkoutSnapshotCodec.encode(again.image, sequence: again.sequence) == encoded,
            "workout snapshot round trip differs")
        _ = attempt { try WorkoutStore().restore(decoded.image) }
    }
}
