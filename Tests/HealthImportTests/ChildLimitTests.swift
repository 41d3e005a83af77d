import Foundation
import HealthModel
import Testing

@testable import HealthImport

/// Elements with more children than the wire carries (workout events, statistics and route files, correlation
/// members, metadata entries): kept whole up to the cap, rejected whole past it with a reason naming the count;
/// never stored in part.
struct ChildLimitTests {
    static let time = "2024-05-01 08:00:00 +0000"

    static func read(_ body: String) throws -> (
        workouts: [Workout], correlations: [Correlation], rows: [Fixtures.Row], summary: ImportSummary
    ) {
        let reader = try ExportReader(bytes: Data(Fixtures.document(body).utf8), name: "export.xml", subject: "anna")
        var batches: [SampleBatch] = []
        while let batch = try reader.nextBatch() { batches.append(batch) }
        let (workouts, correlations) = (reader.takeWorkouts(), reader.takeCorrelations())
        _ = reader.takeRoutes()
        return (workouts, correlations, Fixtures.rows(batches), reader.summary)
    }

    static func metadata(_ count: Int) -> String {
        (0..<count).map { #"  <MetadataEntry key="key\#($0)" value="\#($0)"/>"# }.joined(separator: "\n")
    }

    /// A run on `day` of May 2024 (08:00–09:00) with `children` inside.
    static func workout(day: Int, _ children: String) -> String {
        let date = String(format: "2024-05-%02d", day)
        return """
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="Watch" startDate="\(date) 08:00:00 +0000" endDate="\(date) 09:00:00 +0000">
            \(children)
             </Workout>
            """
    }

    static func events(_ count: Int, day: Int) -> String {
        let date = String(format: "2024-05-%02d", day)
        return (0..<count).map { _ in
            #"  <WorkoutEvent type="HKWorkoutEventTypeLap" date="\#(date) 08:30:00 +0000" duration="0.1" durationUnit="min"/>"#
        }.joined(separator: "\n")
    }

    static func statistics(_ count: Int, day: Int) -> String {
        let date = String(format: "2024-05-%02d", day)
        return (0..<count).map {
            #"  <WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate\#($0)" startDate="\#(date) 08:00:00 +0000" endDate="\#(date) 09:00:00 +0000" average="140" unit="count/min"/>"#
        }.joined(separator: "\n")
    }

    static func routeFiles(_ count: Int) -> String {
        "  <WorkoutRoute>\n"
            + (0..<count).map { #"   <FileReference path="/workout-routes/route_\#($0).gpx"/>"# }.joined(
                separator: "\n") + "\n  </WorkoutRoute>"
    }

    @Test("a workout keeps every event, statistic, route file and metadata entry up to the caps")
    func workoutsAtTheCaps() throws {
        let body = Self.workout(
            day: 1,
            [
                Self.metadata(RecordMapper.maxMetadataEntries), Self.events(Workout.Limits.maxEvents, day: 1),
                Self.statistics(Workout.Limits.maxStatistics, day: 1), Self.routeFiles(Workout.Limits.maxRoutes),
            ].joined(separator: "\n"))
        let (workouts, _, _, summary) = try Self.read(body)
        let workout = try #require(workouts.first)
        #expect(RecordMapper.maxMetadataEntries == 128)
        #expect(workout.metadata.count == 128 && workout.events.count == 4096)
        #expect(workout.statistics.count == 256 && workout.routes.count == 16)
        #expect(throws: Never.self) { try workout.validate() }
        // The route files are missing: rejected as such, the workout kept.
        #expect(summary.rejected.map(\.reason) == ["route file is missing"] && summary.workouts == 1)
        #expect(summary.rejected.first?.count == 16)
    }

    @Test("a workout with children past a cap is rejected whole with its line and count; the others are kept")
    func workoutsPastTheCaps() throws {
        let body = [
            Self.workout(day: 1, Self.events(4100, day: 1)),
            Self.workout(day: 2, Self.statistics(257, day: 2)),
            Self.workout(day: 3, Self.metadata(129)),
            Self.workout(day: 4, Self.routeFiles(17)),
            Self.workout(day: 5, Self.metadata(3) + "\n" + Self.events(2, day: 5)),
        ].joined(separator: "\n")
        let (workouts, _, _, summary) = try Self.read(body)
        #expect(workouts.count == 1 && summary.workouts == 1)
        #expect(workouts.first?.events.count == 2 && workouts.first?.metadata.count == 3)
        let reports = Dictionary(uniqueKeysWithValues: summary.rejected.map { ($0.reason, $0) })
        #expect(
            Set(reports.keys) == [
                "workout has too many events", "workout has too many statistics",
                "workout has too many metadata entries", "workout has too many route files",
            ])
        #expect(reports["workout has too many events"]?.example == "workout has 4100 events; at most 4096")
        #expect(reports["workout has too many statistics"]?.example == "workout has 257 statistics; at most 256")
        #expect(
            reports["workout has too many metadata entries"]?.example
                == "workout has 129 metadata entries; at most 128")
        #expect(reports["workout has too many route files"]?.example == "workout has 17 route files; at most 16")
        // The line of each rejected workout's start tag (the document's body starts on line 13).
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        let starts = lines.indices.filter { lines[$0].contains("<Workout ") }.map { $0 + 13 }
        #expect(reports["workout has too many events"]?.firstLines == [starts[0]])
        #expect(reports["workout has too many route files"]?.firstLines == [starts[3]])
    }

    @Test("a record keeps up to 128 metadata entries and is rejected past them; a repeated key is one entry")
    func recordMetadata() throws {
        let body = [
            Fixtures.record(value: "1", children: Self.metadata(100)),
            Fixtures.record(value: "2", children: Self.metadata(128) + "\n" + Self.metadata(5)),
            Fixtures.record(value: "3", children: Self.metadata(129)),
            Fixtures.record(value: "4"),
        ].joined(separator: "\n")
        let (_, _, rows, summary) = try Self.read(body)
        #expect(rows.map(\.value) == [1, 2, 4])
        #expect(rows[0].metadata.count == 100 && rows[1].metadata.count == 128)
        #expect(summary.rejected.map(\.reason) == ["record has too many metadata entries"])
        #expect(summary.rejected.first?.example == "record has 129 metadata entries; at most 128")
        #expect(summary.rejectedCount == 1 && summary.recordsSeen == 4)
    }

    @Test("a correlation past its members or metadata cap, or with a member that is no sample, is rejected whole")
    func correlations() throws {
        func member(_ value: Int, type: String = "DietaryProtein", unit: String = "g") -> String {
            #"  <Record type="HKQuantityTypeIdentifier\#(type)" sourceName="Scale" unit="\#(unit)" startDate="\#(Self.time)" endDate="\#(Self.time)" value="\#(value)"/>"#
        }
        func food(_ children: String, minute: Int) -> String {
            let time = String(format: "2024-05-01 08:%02d:00 +0000", minute)
            return """
                 <Correlation type="HKCorrelationTypeIdentifierFood" sourceName="Scale" startDate="\(time)" endDate="\(time)">
                \(children)
                 </Correlation>
                """
        }
        let body = [
            food((1...256).map { member($0) }.joined(separator: "\n"), minute: 1),
            food((1...257).map { member($0) }.joined(separator: "\n"), minute: 2),
            food(Self.metadata(129) + "\n" + member(1), minute: 3),
            food(member(1) + "\n" + member(2, unit: "furlong"), minute: 4),
        ].joined(separator: "\n")
        let (_, correlations, _, summary) = try Self.read(body)
        #expect(correlations.count == 1 && correlations.first?.members.count == 256)
        #expect(
            summary.rejected.map(\.reason) == [
                "correlation has too many members", "correlation has too many metadata entries",
                "correlation has a member that is not valid",
            ])
        try #require(summary.rejected.count == 3)
        #expect(summary.rejected[0].example == "correlation has 257 members; at most 256")
        #expect(summary.rejected[1].example == "correlation has 129 metadata entries; at most 128")
        #expect(summary.rejected[2].example.contains("furlong"))
    }
}
