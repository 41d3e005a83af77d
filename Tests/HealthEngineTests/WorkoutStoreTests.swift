import Foundation
import HealthEngine
import HealthModel
import Testing

/// The workout store: filters, the read rule's writer, deletions after an anchor, validation.
struct WorkoutStoreTests {
    static let t0: Timestamp = 1_700_000_000_000_000
    static let watch = SourceInfo(name: "Watch", device: "Watch6,2")

    static func workout(_ type: WorkoutActivityType, day: Int, minutes: Int64 = 30) -> Workout {
        let start = t0 + Int64(day) * Micros.day
        return Workout(activityType: type, start: start, end: start + minutes * Micros.minute, source: watch)
    }

    @Test("queries filter by activity type, start range, UUID, anchor and writer, sorted by start")
    func filters() throws {
        let store = WorkoutStore()
        let workouts = [
            Self.workout(.running, day: 2), Self.workout(.walking, day: 0), Self.workout(.running, day: 1),
        ]
        try store.insert(subject: "anna", workouts, writer: 1)
        try store.insert(subject: "anna", [Self.workout(.cycling, day: 3)], writer: 2)
        let all = try store.workouts(subject: "anna")
        #expect(all.workouts.map(\.workout.start) == (0..<4).map { Self.t0 + Int64($0) * Micros.day })
        #expect(
            try store.workouts(subject: "anna", filter: WorkoutFilter(activityTypes: [.running])).workouts.count == 2)
        let range = WorkoutFilter(start: Self.t0 + Micros.day, end: Self.t0 + 3 * Micros.day)
        #expect(
            try store.workouts(subject: "anna", filter: range).workouts.map(\.workout.activityType) == [
                .running, .running,
            ])
        #expect(try store.workouts(subject: "anna", filter: WorkoutFilter(writer: 2)).workouts.count == 1)
        #expect(try store.workouts(subject: "anna", limit: 1).workouts.count == 1)
        #expect(try store.workouts(subject: "ben").workouts.isEmpty)
        let uuid = workouts[0].uuid
        #expect(
            try store.workouts(subject: "anna", filter: WorkoutFilter(uuids: [uuid])).workouts.first?.workout
                == workouts[0])
        // A delete by another writer reaches nothing; the owner's deletion is reported after its anchor.
        #expect(try store.delete(subject: "anna", uuids: [uuid], writer: 2) == 0)
        #expect(try store.delete(subject: "anna", uuids: [uuid], writer: 1) == 1)
        let changes = try store.workouts(subject: "anna", filter: WorkoutFilter(afterAnchor: 4))
        #expect(changes.workouts.isEmpty && changes.deletions.map(\.uuid) == [uuid] && changes.lastAnchor == 5)
    }

    @Test("content identity: the same workout twice is one; invalid workouts are refused before anything changes")
    func identityAndValidation() throws {
        let store = WorkoutStore()
        let run = Self.workout(.running, day: 0)
        #expect(try store.insert(subject: "anna", [run, run]) == (1, 1))
        #expect(try store.insert(subject: "anna", [run]) == (0, 1))
        #expect(run.uuid == Self.workout(.running, day: 0).uuid)
        #expect(run.uuid != Self.workout(.walking, day: 0).uuid)
        var backwards = Self.workout(.running, day: 1)
        backwards.end = backwards.start - 1
        var badUnit = Self.workout(.running, day: 2)
        badUnit.totalDistance = WorkoutTotal(value: 3, unit: "kcal")
        for bad in [backwards, badUnit] {
            do {
                try store.insert(subject: "anna", [Self.workout(.hiking, day: 5), bad])
                Issue.record("accepted \(bad)")
            } catch let error as HealthError {
                #expect(error.code.rawValue == ErrorCode.invalidSample.rawValue)
            }
        }
        #expect(store.count == 1)
    }

    @Test("activity types: Apple's raw values and the names exports write")
    func activityTypes() throws {
        #expect(WorkoutActivityType.running.rawValue == 37)
        #expect(WorkoutActivityType.walking.rawValue == 52)
        #expect(WorkoutActivityType.mixedCardio.rawValue == 73)
        #expect(WorkoutActivityType.highIntensityIntervalTraining.rawValue == 63)
        #expect(WorkoutActivityType.other.rawValue == 3000)
        #expect(WorkoutActivityType.running.exportName == "HKWorkoutActivityTypeRunning")
        #expect(WorkoutActivityType(named: "HKWorkoutActivityTypeMixedCardio") == .mixedCardio)
        #expect(WorkoutActivityType(named: "Running") == .running)
        #expect(WorkoutActivityType(named: "37") == .running)
        #expect(WorkoutActivityType(named: "81") == nil)
        #expect(WorkoutActivityType.allCases.count == 84)
        #expect(throws: HealthError.self) { try WorkoutActivityType.parse("runing") }
        #expect(WorkoutEvent.Kind(named: "HKWorkoutEventTypeSegment") == .segment)
    }

    @Test("samples of a workout: its interval, its source and the sources on its device")
    func samplesOfWorkout() {
        let run = Self.workout(.running, day: 0)
        let filter = SampleFilter.objects(
            from: run,
            among: [
                SourceInfo(name: "Workout app", device: "Watch6,2"), SourceInfo(name: "Phone", device: "iPhone15,2"),
            ])
        #expect(filter.sources == ["Watch", "Workout app"])
        #expect(filter.date.start == run.start && filter.date.end == run.end + 1)
        #expect(filter.date.strictStartDate && filter.date.strictEndDate)
    }
}
