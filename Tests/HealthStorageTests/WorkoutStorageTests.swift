import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix
import Testing

@testable import HealthStorage

/// Workouts in the log (record kinds 5 and 6), in their own snapshot file, and through restarts.
@Suite(.serialized)
struct WorkoutStorageTests {
    static let t0: Timestamp = 1_700_000_000_000_000

    /// `count` runs a day apart, each with a pause, heart-rate statistics and metadata.
    static func runs(_ count: Int, from day: Int = 0) -> [Workout] {
        (day..<day + count).map { day in
            let start = t0 + Int64(day) * Micros.day
            return Workout(
                activityType: day % 3 == 0 ? .walking : .running, start: start, end: start + 40 * Micros.minute,
                duration: 38 * Micros.minute, totalEnergyBurned: WorkoutTotal(value: 300 + Double(day), unit: "kcal"),
                totalDistance: WorkoutTotal(value: 5 + Double(day) / 10, unit: "km"), source: watch,
                metadata: ["HKIndoorWorkout": .number(0)],
                events: [
                    WorkoutEvent(kind: .pause, date: start + 10 * Micros.minute),
                    WorkoutEvent(kind: .resume, date: start + 12 * Micros.minute),
                ],
                statistics: [
                    WorkoutStatistic(
                        type: "HKQuantityTypeIdentifierHeartRate", start: start, end: start + 40 * Micros.minute,
                        average: 150, maximum: 175, unit: "count/min")
                ],
                routes: ["/workout-routes/route_\(day).gpx"])
        }
    }

    static func all(_ store: HealthStore, _ subject: String = "anna") throws -> WorkoutQueryResult {
        try store.workouts.workouts(subject: subject)
    }

    @Test("workout records encode and decode to the same change; other types and bad writers are refused")
    func logRecords() throws {
        let changes: [LogChange] = [
            .workouts(subject: "anna", Self.runs(3), writer: 7),
            .workoutDelete(subject: "anna", uuids: [Self.runs(1)[0].uuid], writer: nil),
            .workoutDelete(subject: "anna", uuids: [Self.runs(1)[0].uuid], writer: 4),
        ]
        for change in changes {
            #expect(change.kind.rawValue >= 5)
            #expect(try LogChange.decode(kind: change.kind.rawValue, payload: change.encodePayload()) == change)
        }
        var wrongType = ByteWriter()
        wrongType.writeString("anna")
        wrongType.writeString("stepCount")
        wrongType.writeVarint(0)
        wrongType.writeVarint(0)
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 5, payload: wrongType.bytes) }
        var payload = try changes[0].encodePayload()
        payload.removeLast()
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 5, payload: payload) }
    }

    @Test("the workout snapshot round-trips, and a flipped byte or a truncation is damage")
    func snapshotCodec() throws {
        let store = WorkoutStore()
        try store.insert(subject: "anna", Self.runs(4), writer: 2)
        try store.insert(subject: "ben", Self.runs(1))
        try store.delete(subject: "anna", uuids: [Self.runs(1)[0].uuid])
        let (image, _) = store.image { 41 }
        let bytes = WorkoutSnapshotCodec.encode(image, sequence: 41)
        let decoded = try WorkoutSnapshotCodec.decode(bytes)
        #expect(decoded.sequence == 41)
        #expect(decoded.image == image)
        for index in [0, 9, bytes.count / 2, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x40
            #expect(throws: CodecError.self) { try WorkoutSnapshotCodec.decode(damaged) }
        }
        #expect(throws: CodecError.self) { try WorkoutSnapshotCodec.decode(Array(bytes.dropLast(5))) }
    }

    @Test("workouts survive a stop without a snapshot (replayed from the log) and one with a snapshot")
    func restarts() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        #expect(try durable.insertWorkouts(subject: "anna", Self.runs(5), writer: 3) == (5, 0))
        #expect(try durable.insertWorkouts(subject: "anna", Self.runs(5), writer: 3) == (0, 5))  // not logged
        #expect(try durable.deleteWorkouts(subject: "anna", uuids: [Self.runs(1)[0].uuid]) == 1)
        _ = try durable.insert(stepBatch(id: 1, rows: 3))
        let before = try Self.all(durable.store)
        #expect(before.workouts.count == 4 && before.lastAnchor == 6)
        durable.close(snapshot: false)

        let (replayed, _) = try openStore(directory)
        #expect(replayed.recovery.replayedRecords == 3)
        #expect(try Self.all(replayed.store) == before)
        // Anchors keep growing after the replay.
        try replayed.insertWorkouts(subject: "anna", Self.runs(1, from: 9))
        let afterReplay = try Self.all(replayed.store)
        #expect(afterReplay.lastAnchor == 7 && afterReplay.workouts.last?.anchor == 7)
        replayed.close()  // a snapshot: workout-N.snap in the manifest

        let files = try FileSystem.contentsOfDirectory(directory + "/snapshots")
        #expect(files.contains { $0.hasPrefix("workout-") && $0.hasSuffix(".snap") })
        let (restored, _) = try openStore(directory)
        defer { restored.close() }
        #expect(restored.recovery.replayedRecords == 0)
        #expect(try Self.all(restored.store) == afterReplay)
        let changes = try restored.store.workouts.workouts(subject: "anna", filter: WorkoutFilter(afterAnchor: 5))
        #expect(changes.deletions.map(\.uuid) == [Self.runs(1)[0].uuid])
        #expect(changes.workouts.map(\.anchor) == [7])
    }

    @Test("a workout whose UUID is stored with other content refuses the whole request, logging nothing")
    func conflict() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        defer { durable.close(snapshot: false) }
        var runs = Self.runs(2)
        try durable.insertWorkouts(subject: "anna", [runs[0]])
        runs[0].totalDistance = WorkoutTotal(value: 9, unit: "km")
        #expect(throws: HealthError.self) { try durable.insertWorkouts(subject: "anna", runs) }
        do {
            try durable.insertWorkouts(subject: "anna", runs)
        } catch let error as HealthError {
            #expect(error.code.rawValue == ErrorCode.uuidConflict.rawValue)
        }
        #expect(try Self.all(durable.store).workouts.count == 1)
    }
}
