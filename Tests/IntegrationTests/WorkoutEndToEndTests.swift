import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Workouts through the real hkd and hkq (HEALTHKIT.md §13): import of a synthetic export shaped like export B,
/// `hkq workouts` (rows and monthly totals against an oracle from the XML), the samples of a workout and their
/// statistics, grants on the workout type, and all of it across a kill -9 (log replay) and a snapshot.
@Suite("workouts end to end", .serialized)
struct WorkoutEndToEndTests {
    static func run(_ arguments: [String]) async -> (status: Int32, out: String, err: String) {
        let (console, out, err) = Console.capturing()
        let status = await HKQ.standard.run(arguments: arguments, environment: [:], console: console)
        return (status, out.text, err.text)
    }

    static func json(_ text: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
    }

    /// hkq's monthly totals agree with the months the XML says (in +02:00, as the export writes them).
    static func expectMonths(_ hkd: TestServer, xml: String) async throws {
        let months = await run(
            hkd.hkqServer + ["--subject", "anna", "--format", "json", "workouts", "--by", "month", "--tz", "Etc/GMT-2"])
        #expect(months.status == 0, "\(months.err)")
        let rows = try json(months.out)
        let oracle = WorkoutExport.monthTotals(xml)
        var seen: [String: WorkoutExport.MonthTotals] = [:]
        for row in rows {
            let month = String((row["period"] as! String).prefix(7))
            seen[month, default: .init()].count += row["count"] as! Int
            seen[month]!.minutes += row["duration"] as! Double
            seen[month]!.kilometres += row["distance"] as! Double
            let type =
                "HKWorkoutActivityType" + (row["type"] as! String).prefix(1).uppercased()
                + (row["type"] as! String).dropFirst()
            seen[month]!.byType[type, default: 0] += row["count"] as! Int
        }
        #expect(seen.keys.sorted() == oracle.keys.sorted())
        for (month, expected) in oracle {
            #expect(seen[month]?.count == expected.count && seen[month]?.byType == expected.byType, "\(month)")
            // The written durations and distances, every digit: only the order of the additions differs.
            #expect(abs((seen[month]?.minutes ?? 0) - expected.minutes) < 1e-9 * Double(expected.count), "\(month)")
            #expect(abs((seen[month]?.kilometres ?? 0) - expected.kilometres) < 1e-9 * Double(expected.count))
        }
    }

    @Test("an export's 60 workouts: imported once, listed, totalled per month, their heart rate, across kill -9")
    func importQueryRestart() async throws {
        let directory = try TestDirectory(prefix: "hk-workouts")
        let xml = WorkoutExport.document()
        let path = directory.appending("export.xml")
        try Data(xml.utf8).write(to: URL(fileURLWithPath: path))
        let hkd = try await TestServer()
        let first = await Self.run(hkd.hkqServer + ["--subject", "anna", "--format", "json", "import", path])
        #expect(first.status == 3, "the route files it names are absent, and so rejected: \(first.err)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(first.out.utf8)) as? [String: Any])
        #expect(summary["workouts"] as? Int == 60 && summary["workoutsInserted"] as? Int == 60)
        let again = await Self.run(hkd.hkqServer + ["--subject", "anna", "import", path])
        #expect(again.out.contains("60 workouts (0 new, 60 already stored)"), "\(again.out)")

        let runs = await Self.run(
            hkd.hkqServer + [
                "--subject", "anna", "--format", "json", "workouts", "--type", "running", "--from", "2024-03-01",
                "--to", "2024-04-01", "--tz", "Etc/GMT-2",
            ])
        #expect(runs.status == 0, "\(runs.err)\(runs.out)")
        let listed = try Self.json(runs.out)
        #expect(!listed.isEmpty && listed.allSatisfy { $0["type"] as? String == "running" })
        #expect(listed.allSatisfy { ($0["start"] as? String)?.hasPrefix("2024-03") == true })
        #expect((listed.first?["metadata"] as? [String: Any])?["HKTimeZone"] as? String == "Europe/Paris")
        let table = await Self.run(hkd.hkqServer + ["--subject", "anna", "workouts", "--type", "walking"])
        #expect(table.out.contains("walking") && table.out.contains("KCAL"), "\(table.out)")
        try await Self.expectMonths(hkd, xml: xml)

        // Heart rate during one workout: the Watch's samples in its interval, not the phone's.
        let client = hkd.client()
        let chosen = try #require(try await client.workouts(subject: "anna").workouts.dropFirst(7).first?.workout)
        let everything = try await client.samples(
            try QuantityType.named("heartRate"), subject: "anna",
            filter: SampleFilter(date: DatePredicate(start: chosen.start, end: chosen.end + 1)))
        let expected = everything.filter {
            $0.source.name == WorkoutExport.watchName && $0.start >= chosen.start && $0.end <= chosen.end
        }
        #expect(everything.count == expected.count + 1)  // the phone's reading
        client.close()
        let uuid = chosen.uuid.uuidString
        let samples = await Self.run(
            hkd.hkqServer + ["--subject", "anna", "--format", "json", "samples", "heartRate", "--workout", uuid])
        #expect(samples.status == 0, "\(samples.err)")
        let values = try Self.json(samples.out).map { $0["value"] as! Double }
        #expect(values == expected.map(\.value))
        let stats = await Self.run(
            hkd.hkqServer + [
                "--subject", "anna", "--format", "json", "stats", "heartRate", "--workout", uuid, "--options",
                "avg,max",
            ])
        #expect(stats.status == 0, "\(stats.err)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(stats.out.utf8)) as? [String: Any])
        let average = expected.map(\.value).reduce(0, +) / Double(expected.count)
        #expect(abs((figures["average"] as? Double ?? -1) - average) < 1e-9, "\(stats.out)")
        #expect(figures["maximum"] as? Double == expected.map(\.value).max())
        // The export's own statistics of that workout say the same.
        #expect(chosen.statistics.first?.maximum == expected.map(\.value).max())
        let unknown = await Self.run(
            hkd.hkqServer + ["--subject", "anna", "samples", "heartRate", "--workout", UUID().uuidString])
        #expect(unknown.status == 65 && unknown.err.contains("no workout"), "\(unknown.err)")

        // kill -9: the log alone brings everything back; then a clean stop writes the workout snapshot.
        await hkd.kill()
        let second = try await hkd.restart()
        try await Self.expectMonths(second, xml: xml)
        #expect(await second.stop() == 0)
        let third = try await second.restart()
        try await Self.expectMonths(third, xml: xml)
        let check = third.client()
        #expect(try await check.workouts(subject: "anna").workouts.count == 60)
        #expect(try await check.deleteWorkouts([chosen.uuid], subject: "anna") == 1)
        let changes = try await check.workouts(subject: "anna", filter: WorkoutFilter(afterAnchor: 60))
        #expect(changes.workouts.isEmpty && changes.deleted.map(\.uuid) == [chosen.uuid])
        check.close()
        await third.stop()
    }

    @Test("blood pressure correlations: imported once, printed as pairs, the members still quantities, after a kill")
    func bloodPressure() async throws {
        func reading(_ time: String, _ systolic: Int, _ diastolic: Int) -> String {
            let member = { (type: String, value: Int) in
                #"<Record type="HKQuantityTypeIdentifierBloodPressure\#(type)" sourceName="Cuff" unit="mmHg" startDate="\#(time)" endDate="\#(time)" value="\#(value)"/>"#
            }
            return member("Systolic", systolic) + "\n" + member("Diastolic", diastolic) + "\n"
                + #"<Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="\#(time)" endDate="\#(time)">"#
                + "\n " + member("Systolic", systolic) + "\n " + member("Diastolic", diastolic) + "\n</Correlation>"
        }
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
            \(reading("2024-02-01 08:00:00 +0000", 121, 79))
            \(reading("2024-02-02 08:00:00 +0000", 134, 86))
            </HealthData>

            """
        let directory = try TestDirectory(prefix: "hk-bp")
        let path = directory.appending("export.xml")
        try Data(xml.utf8).write(to: URL(fileURLWithPath: path))
        let hkd = try await TestServer()
        let imported = await Self.run(hkd.hkqServer + ["--subject", "anna", "--format", "json", "import", path])
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(imported.out.utf8)) as? [String: Any])
        #expect(summary["samples"] as? Int == 4 && summary["correlations"] as? Int == 2, "\(imported.out)")
        let skipped = (summary["skipped"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
        #expect(skipped == ["HealthData locale"], "\(imported.out)")
        func expectPairs(_ server: TestServer) async throws {
            let pairs = await Self.run(
                server.hkqServer + ["--subject", "anna", "--format", "json", "samples", "bloodPressure", "--tz", "UTC"])
            #expect(pairs.status == 0, "\(pairs.err)")
            let rows = try Self.json(pairs.out)
            #expect(rows.map { $0["bloodPressureSystolic"] as? Double } == [121, 134])
            #expect(rows.map { $0["bloodPressureDiastolic"] as? Double } == [79, 86])
            #expect(rows.map { $0["source"] as? String } == ["Cuff", "Cuff"])
            // The members are quantities, each counted once.
            let client = server.client()
            defer { client.close() }
            let systolic = try await client.samples(try QuantityType.named("bloodPressureSystolic"), subject: "anna")
            #expect(systolic.map(\.value) == [121, 134])
        }
        try await expectPairs(hkd)
        let table = await Self.run(hkd.hkqServer + ["--subject", "anna", "samples", "bloodPressure"])
        #expect(
            table.out.contains("BLOODPRESSURESYSTOLIC") || table.out.contains("bloodPressureSystolic"), "\(table.out)")
        await hkd.kill()
        let second = try await hkd.restart()
        try await expectPairs(second)
        await second.stop()
    }

    @Test("grants on the workout type: share without read sees only its own; no grant is refused")
    func grants() async throws {
        let hkd = try await TestServer()
        let admin = hkd.client()
        defer { admin.close() }
        let start: Timestamp = 1_704_924_000_000_000
        let theirs = Workout(
            activityType: .running, start: start, end: start + Micros.hour, source: SourceInfo(name: "Watch"))
        _ = try await admin.insertWorkouts([theirs], subject: "anna")
        let created = try await admin.administer(
            .create(
                IdentitySpec(
                    name: "run-sync", subjects: ["anna"],
                    grants: [TypeGrant(type: "HKWorkoutTypeIdentifier", share: true, read: false)])))
        let agent = hkd.client(token: created.token)
        defer { agent.close() }
        let own = Workout(
            activityType: .cycling, start: start + Micros.day, end: start + Micros.day + Micros.hour,
            source: SourceInfo(name: "RunSync"))
        #expect(try await agent.insertWorkouts([own], subject: "anna").inserted == 1)
        #expect(try await agent.workouts(subject: "anna").workouts.map(\.workout.uuid) == [own.uuid])
        #expect(try await admin.workouts(subject: "anna").workouts.count == 2)
        #expect(try await agent.deleteWorkouts([theirs.uuid], subject: "anna") == 0)
        let reader = try await admin.administer(
            .create(
                IdentitySpec(
                    name: "steps-only", subjects: ["anna"],
                    grants: [TypeGrant(type: "stepCount", share: true, read: true)])))
        let other = hkd.client(token: reader.token)
        defer { other.close() }
        do {
            _ = try await other.insertWorkouts([own], subject: "anna")
            Issue.record("an identity without a workout grant wrote a workout")
        } catch {
            #expect(error.code.rawValue == ErrorCode.forbidden.rawValue)
        }
        #expect(try await other.workouts(subject: "anna").workouts.isEmpty)
        await hkd.stop()
    }
}
