import Foundation
import HealthModel
import Testing

@Suite("Likely duplicate workouts")
struct LikelyDuplicatesTests {
    static func workout(
        _ type: WorkoutActivityType = .running, start: Timestamp = 1_000_000, end: Timestamp = 2_000_000,
        source: String = "Connect", version: String = "5", energy: Double = 338
    ) -> Workout {
        Workout(
            uuid: UUID(), activityType: type, start: start, end: end,
            totalEnergyBurned: WorkoutTotal(value: energy, unit: "kcal"),
            source: SourceInfo(name: source, version: version))
    }

    @Test("repeats of activity, start, end and source name the first of their group; others stand alone")
    func groups() {
        let first = Self.workout()
        let copies = [Self.workout(version: "31"), Self.workout(energy: 340)]
        let others = [
            Self.workout(.walking), Self.workout(start: 1_000_001), Self.workout(end: 2_000_001),
            Self.workout(source: "Garmin"),
        ]
        let all = [first] + copies + others
        let duplicates = LikelyDuplicates(all)
        #expect(copies.allSatisfy { duplicates.repeated(by: $0) == first.uuid })
        #expect(duplicates.repeated(by: first) == nil)
        #expect(others.allSatisfy { duplicates.repeated(by: $0) == nil })
        #expect(duplicates.distinct(all).map(\.uuid) == ([first] + others).map(\.uuid))
    }

    @Test("the first of a group is the first in the order given; a workout listed twice is not its own repeat")
    func order() {
        let a = Self.workout()
        let b = Self.workout()
        #expect(LikelyDuplicates([b, a]).repeated(by: a) == b.uuid)
        #expect(LikelyDuplicates([a, a]).firstOfGroup.isEmpty)
    }
}
