import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthImport

/// `<Workout>` elements of an export: kept with metadata, events, statistics and routes; checked against an
/// oracle that reads the XML with regular expressions.
struct WorkoutImportTests {
    static func read(_ xml: String) throws -> (workouts: [Workout], summary: ImportSummary) {
        let reader = try ExportReader(bytes: Data(xml.utf8), name: "export.xml", subject: "anna")
        while try reader.nextBatch() != nil {}
        return (reader.takeWorkouts(), reader.summary)
    }

    @Test("all 60 workouts are kept; per-month counts, durations and distances agree with the XML")
    func monthOracle() throws {
        let xml = WorkoutExport.document()
        let (workouts, summary) = try Self.read(xml)
        #expect(workouts.count == 60 && summary.workouts == 60)
        #expect(summary.skipped["Workout"] == nil)
        #expect(summary.rejected.isEmpty)
        let byType = Dictionary(grouping: workouts, by: \.activityType).mapValues(\.count)
        #expect(byType == [.running: 46, .walking: 13, .mixedCardio: 1])
        let oracle = WorkoutExport.monthTotals(xml)
        // Months by the local start date (+02:00), as the XML writes it.
        let calendar = { () -> Calendar in
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(secondsFromGMT: 7200)!
            return calendar
        }()
        var months: [String: WorkoutExport.MonthTotals] = [:]
        for workout in workouts {
            let date = Date(timeIntervalSince1970: Double(workout.start) / 1e6)
            let parts = calendar.dateComponents([.year, .month], from: date)
            let month = String(format: "%04d-%02d", parts.year!, parts.month!)
            months[month, default: .init()].count += 1
            months[month]!.minutes += Double(workout.duration) / 6e7
            months[month]!.kilometres += workout.totalDistance!.value(in: WorkoutTotal.distanceUnit)! / 1000
            months[month]!.byType[workout.activityType.exportName, default: 0] += 1
        }
        #expect(months.keys.sorted() == oracle.keys.sorted())
        for (month, expected) in oracle {
            let got = try #require(months[month])
            #expect(got.count == expected.count && got.byType == expected.byType, "\(month)")
            #expect(abs(got.minutes - expected.minutes) < 1e-6, "\(month)")
            #expect(abs(got.kilometres - expected.kilometres) < 1e-9, "\(month)")
        }
    }

    @Test("one workout keeps its source, totals, metadata, events, statistics and route; UUIDs are stable")
    func details() throws {
        let (workouts, _) = try Self.read(WorkoutExport.document())
        let first = try #require(workouts.first)
        #expect(first.source.name == WorkoutExport.watchName && first.source.device == "Watch6,2")
        #expect(first.totalEnergyBurned?.unit == "kcal" && first.totalDistance?.unit == "km")
        #expect(first.metadata["HKTimeZone"] == .string("Europe/Paris"))
        #expect(first.metadata["HKIndoorWorkout"] != nil)
        #expect(first.events.map(\.kind) == [.pause, .resume, .segment])
        #expect(first.events[2].duration == 10 * Micros.minute)
        #expect(first.statistics.first?.type == "HKQuantityTypeIdentifierHeartRate")
        #expect(first.statistics.first?.maximum != nil && first.statistics.first?.unit == "count/min")
        #expect(first.routes == ["/workout-routes/route_0.gpx"])
        #expect(throws: Never.self) { try first.validate() }
        let (again, _) = try Self.read(WorkoutExport.document())
        #expect(again.map(\.uuid) == workouts.map(\.uuid))
        #expect(Set(workouts.map(\.uuid)).count == 60)
    }

    /// A `<Workout>` of 08:00:00–`end` on 2024-05-04 with the attributes `duration`.
    static func workout(end: String, duration: String) -> String {
        #" <Workout workoutActivityType="HKWorkoutActivityTypeRunning" \#(duration) sourceName="Watch" "#
            + #"startDate="2024-05-04 08:00:00 +0000" endDate="2024-05-04 \#(end) +0000"/>"#
    }

    @Test("the duration is kept as written, to the microsecond, whether shorter or longer than end − start")
    func writtenDuration() throws {
        let xml = Fixtures.document(
            [
                // 21.3997 min written over 21 min 23 s (21.383 min): pauses.
                Self.workout(end: "08:21:23", duration: #"duration="21.3997" durationUnit="min""#),
                // Garmin: a second longer than end − start.
                Self.workout(end: "08:30:00", duration: #"duration="1801" durationUnit="s""#),
                Self.workout(end: "08:00:00", duration: #"duration="0.00000049" durationUnit="s""#),
                Self.workout(end: "08:45:00", duration: ""),
            ].joined(separator: "\n"))
        let (workouts, summary) = try Self.read(xml)
        #expect(summary.rejected.isEmpty, "\(summary.rejected)")
        #expect(workouts.map(\.duration) == [1_283_982_000, 1_801_000_000, 0, 45 * Micros.minute])
        for workout in workouts { #expect(throws: Never.self) { try workout.validate() } }
    }

    @Test("a duration no instant arithmetic can hold is rejected with its line, not trapped on")
    func endlessDuration() throws {
        let xml = Fixtures.document(
            [
                Self.workout(end: "08:30:00", duration: #"duration="1e300" durationUnit="min""#),
                Self.workout(end: "08:30:00", duration: #"duration="4000000" durationUnit="d""#),
                Self.workout(end: "08:31:00", duration: #"duration="-1" durationUnit="min""#),
                Self.workout(end: "08:32:00", duration: #"duration="30" durationUnit="min""#),
            ].joined(separator: "\n"))
        let (workouts, summary) = try Self.read(xml)
        #expect(workouts.map(\.duration) == [30 * Micros.minute])
        #expect(summary.rejected.map(\.reason) == ["workout duration is not valid"])
        #expect(summary.rejected.first?.count == 3)
    }

    @Test("a workout without totals takes them from its statistics; a malformed one is rejected with its line")
    func statisticsTotalsAndRejections() throws {
        let xml = Fixtures.document(
            """
             <Workout workoutActivityType="HKWorkoutActivityTypeCycling" sourceName="Watch" startDate="2024-05-01 08:00:00 +0000" endDate="2024-05-01 09:00:00 +0000">
              <WorkoutStatistics type="HKQuantityTypeIdentifierDistanceCycling" startDate="2024-05-01 08:00:00 +0000" endDate="2024-05-01 09:00:00 +0000" sum="25.5" unit="km"/>
              <WorkoutStatistics type="HKQuantityTypeIdentifierActiveEnergyBurned" startDate="2024-05-01 08:00:00 +0000" endDate="2024-05-01 09:00:00 +0000" sum="610" unit="kcal"/>
             </Workout>
             <Workout workoutActivityType="HKWorkoutActivityTypeUnderwaterBasketWeaving" sourceName="Watch" startDate="2024-05-02 08:00:00 +0000" endDate="2024-05-02 09:00:00 +0000"/>
             <Workout workoutActivityType="HKWorkoutActivityTypeYoga" sourceName="Watch" startDate="2024-05-03 08:00:00 +0000"/>
            """)
        let (workouts, summary) = try Self.read(xml)
        #expect(workouts.count == 1)
        let ride = try #require(workouts.first)
        #expect(ride.activityType == .cycling && ride.duration == Micros.hour)
        #expect(ride.totalDistance == WorkoutTotal(value: 25.5, unit: "km"))
        #expect(ride.totalEnergyBurned == WorkoutTotal(value: 610, unit: "kcal"))
        #expect(summary.rejectedCount == 2)
        #expect(summary.rejected.contains { $0.reason.contains("unknown workout activity type") })
        #expect(summary.rejected.contains { $0.reason.contains("endDate") })
    }

    @Test("children that cannot be read are counted by name; a workout hkd would refuse is rejected before sending")
    func unreadChildrenAndInvalidWorkouts() throws {
        let xml = Fixtures.document(
            """
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="Watch" startDate="2024-05-01 08:00:00 +0000" endDate="2024-05-01 09:00:00 +0000">
              <MetadataEntry value="1"/>
              <WorkoutEvent type="HKWorkoutEventTypeCheer" date="2024-05-01 08:10:00 +0000"/>
              <WorkoutEvent type="HKWorkoutEventTypeLap" date="sometime"/>
              <WorkoutEvent type="HKWorkoutEventTypeLap" date="2024-05-01 08:20:00 +0000"/>
              <WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate" average="150" unit="count/min"/>
             </Workout>
             <Workout workoutActivityType="HKWorkoutActivityTypeYoga" sourceName="Watch" startDate="0000-05-03 08:00:00 +0000" endDate="0000-05-03 09:00:00 +0000"/>
            """)
        let (workouts, summary) = try Self.read(xml)
        #expect(workouts.count == 1 && workouts.first?.events.count == 1)
        #expect(summary.skipped["WorkoutEvent of an unknown type"] == 1)
        #expect(summary.skipped["WorkoutEvent without a valid date"] == 1)
        #expect(summary.skipped["WorkoutStatistics without a type or valid dates"] == 1)
        #expect(summary.skipped["Workout MetadataEntry without a key or value"] == 1)
        #expect(summary.rejected.map(\.reason) == ["workout is not valid"], "\(summary.rejected)")
        let line = xml.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("0000-05-03") }
        #expect(summary.rejected.map(\.element) == ["Workout"] && summary.rejected.first?.firstLines == [line! + 1])
    }
}
