import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import Testing

/// Figures of `hkq workouts` and `hkq activity` as the export wrote them (docs/OUTPUT.md: JSON numbers exact,
/// tables rounded for people), and the characteristics hkd refuses whoever sends them (HEALTHKIT.md §13).
@Suite(.serialized, .liveServer) struct WorkoutFigureTests {
    /// A `<Workout>` on `day` from 08:00:00 to `end` (UTC) with its duration and totals as written.
    static func workout(
        _ type: String, day: String, end: String, duration: String, distance: String, distanceUnit: String = "km",
        energy: String, energyUnit: String = "kcal"
    ) -> String {
        #" <Workout workoutActivityType="HKWorkoutActivityType\#(type)" duration="\#(duration)" durationUnit="min" "#
            + #"totalDistance="\#(distance)" totalDistanceUnit="\#(distanceUnit)" totalEnergyBurned="\#(energy)" "#
            + #"totalEnergyBurnedUnit="\#(energyUnit)" sourceName="Watch" "#
            + #"startDate="\#(day) 08:00:00 +0000" endDate="\#(day) \#(end) +0000"/>"#
    }

    static let workouts = [
        // 21.3997 minutes of running over 21 min 23 s (21.383 min).
        workout(
            "Running", day: "2017-05-04", end: "08:21:23", duration: "21.3997", distance: "3.40897998046875",
            energy: "338.4561234"),
        // Garmin: a second longer than end − start.
        workout(
            "Running", day: "2017-05-11", end: "08:30:00", duration: "30.016666666666666", distance: "5",
            energy: "612.5"),
        workout(
            "Walking", day: "2017-05-12", end: "08:40:00", duration: "40", distance: "2.1", distanceUnit: "mi",
            energy: "700.7", energyUnit: "kJ"),
    ]

    /// Imports ``workouts`` for `subject`.
    static func importWorkouts(_ subject: String) async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file("workouts.xml", exportDocument(workouts))
        let imported = try await runLive(["import", path], subject: subject)
        #expect(imported.status == 0 && imported.out.contains("3 workouts (3 new"), "\(imported.out)\(imported.err)")
    }

    static func run(_ arguments: [String], subject: String) async throws -> String {
        let result = try await runLive(arguments + ["--tz", "UTC"], subject: subject)
        #expect(result.status == 0, "\(arguments): \(result.err)")
        return result.out
    }

    /// `value` in `unit` converted to `target`, as hkq converts a total.
    static func converted(_ value: Double, _ unit: String, to target: String) throws -> Double {
        try HealthUnit(parsing: unit).convert(value, to: try HealthUnit(parsing: target))
    }

    @Test("workouts: the written duration, distance and energy, every digit in JSON and CSV, rounded in tables")
    func workoutRows() async throws {
        try await Self.importWorkouts("figures-rows")
        let text = try await Self.run(["workouts", "--format", "json"], subject: "figures-rows")
        // Compared as text: Foundation's JSON reader may miss the last bit (30.016666666666662).
        #expect(try json(text, as: [[String: Any]].self).count == 3)
        let garmin = Double(1_801_000_000) / 6e7
        #expect(text.contains(#""duration":21.3997,"distance":3.40897998046875,"energy":338.4561234,"#), "\(text)")
        let second = NumberFormat.shortest(garmin)
        #expect(text.contains(#""duration":\#(second),"distance":5,"energy":612.5,"#), "\(text)")
        let mile = NumberFormat.shortest(try Self.converted(2.1, "mi", to: "km"))
        let kilojoules = NumberFormat.shortest(try Self.converted(700.7, "kJ", to: "kcal"))
        #expect(text.contains(#""duration":40,"distance":\#(mile),"energy":\#(kilojoules),"#), "\(text)")

        let csv = try await Self.run(["workouts", "--format", "csv"], subject: "figures-rows")
        #expect(csv.contains(",running,21.3997,3.40897998046875,338.4561234,Watch,0,"), "\(csv)")
        let table = try await Self.run(["workouts"], subject: "figures-rows")
        #expect(table.contains("21.3997") && table.contains("3.40898") && table.contains("338.456"), "\(table)")
        #expect(!table.contains("3.40897998046875"), "\(table)")
    }

    @Test("workouts --by month sums the written durations and the totals, exact in JSON")
    func monthlyTotals() async throws {
        try await Self.importWorkouts("figures-months")
        let text = try await Self.run(["workouts", "--by", "month", "--format", "json"], subject: "figures-months")
        let rows = try json(text, as: [[String: Any]].self)
        #expect(rows.map { $0["type"] as? String } == ["running", "walking"])
        // The written durations, 1,283,982,000 and 1,801,000,000 µs, not end − start (1,283,000,000 and 1,800 s).
        let minutes = NumberFormat.shortest(Double(1_283_982_000 + 1_801_000_000) / 6e7)
        let kilometres = NumberFormat.shortest(3.40897998046875 + 5)
        let kilocalories = NumberFormat.shortest(338.4561234 + 612.5)
        #expect(
            text.contains(
                #""type":"running","count":2,"duration":\#(minutes),"distance":\#(kilometres),"energy":\#(kilocalories)}"#
            ), "\(text)")
        let csv = try await Self.run(["workouts", "--by", "month", "--format", "csv"], subject: "figures-months")
        #expect(csv.contains(",running,2,\(NumberFormat.display(Double(3_084_982_000) / 6e7)),"), "\(csv)")
    }

    @Test("activity: Apple's values and ours, every digit in JSON and CSV")
    func activityFigures() async throws {
        let live = try #require(LiveServer.current)
        let day = "2017-05-04"
        let summary =
            #" <ActivitySummary dateComponents="\#(day)" activeEnergyBurned="512.3456789" "#
            + #"activeEnergyBurnedGoal="600.25" activeEnergyBurnedUnit="kcal" appleExerciseTime="31.0625" "#
            + #"appleExerciseTimeGoal="30" appleStandHours="9" appleStandHoursGoal="12"/>"#
        let records = [
            exportRecord(
                type: "HKQuantityTypeIdentifierActiveEnergyBurned", unit: "kcal", value: "100.1234",
                start: "\(day) 10:00:00 +0000", end: "\(day) 10:20:00 +0000"),
            exportRecord(
                type: "HKQuantityTypeIdentifierAppleExerciseTime", unit: "min", value: "12.3456",
                start: "\(day) 10:00:00 +0000", end: "\(day) 10:20:00 +0000"),
        ]
        let path = try live.file("activity.xml", exportDocument(records + [summary]))
        let imported = try await runLive(["import", path], subject: "figures-activity")
        #expect(imported.status == 0, "\(imported.err)")
        let text = try await Self.run(["activity", "--compare", "--format", "json"], subject: "figures-activity")
        #expect(text.contains(#""activeEnergyBurned":512.3456789,"ourActiveEnergyBurned":100.1234,"#), "\(text)")
        #expect(text.contains(#""activeEnergyBurnedGoal":600.25,"#), "\(text)")
        #expect(text.contains(#""appleExerciseTime":31.0625,"ourAppleExerciseTime":12.3456,"#), "\(text)")
        let csv = try await Self.run(["activity", "--compare", "--format", "csv"], subject: "figures-activity")
        #expect(csv.contains("\(day),512.3456789,100.1234,600.25,kcal,"), "\(csv)")
    }

    /// The error hkd answers `entries` with, or `nil` when it sets them.
    static func refusal(_ entries: [CharacteristicEntry], subject: String) async throws -> HealthClientError? {
        let client = try #require(LiveServer.current).server.client()
        defer { client.close() }
        do {
            try await client.setCharacteristics(entries, subject: subject)
            return nil
        } catch {
            return error
        }
    }

    @Test("hkd refuses impossible characteristics from any client, naming them, and sets nothing of the request")
    func serverRefusesImpossibleCharacteristics() async throws {
        let subject = "figures-me"
        let cases: [(CharacteristicEntry, String)] = [
            (CharacteristicEntry(key: "fitzpatrickSkinType", value: "banana"), "I, II, III, IV, V, VI"),
            (CharacteristicEntry(key: "bloodType", value: "HKBloodTypeCPositive"), "aPositive"),
            (CharacteristicEntry(key: "dateOfBirth", value: "2023-02-29"), "years 0001–9999"),
            (CharacteristicEntry(key: "dateOfBirth", value: "0000-01-01"), "years 0001–9999"),
        ]
        for (entry, named) in cases {
            let female = CharacteristicEntry(key: "biologicalSex", value: "female")
            let error = try #require(
                try await Self.refusal([female, entry], subject: subject), "accepted \(entry.key)=\(entry.value)")
            #expect(error.origin == .server && error.code.rawValue == ErrorCode.invalidArgument.rawValue)
            #expect(error.message.contains("\(entry.key) \"\(entry.value)\""), "\(error.message)")
            #expect(error.message.contains(named), "\(error.message)")
        }
        let listed = try await runLive(["characteristics", "--format", "csv"], subject: subject)
        #expect(listed.out.contains("biologicalSex,\n"), "nothing set by a refused request: \(listed.out)\(listed.err)")
        let leapDay = [CharacteristicEntry(key: "dateOfBirth", value: "2024-02-29")]
        #expect(try await Self.refusal(leapDay, subject: subject) == nil)
    }
}
