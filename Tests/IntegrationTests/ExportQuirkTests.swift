import Foundation
import TestSupport
import Testing

/// Quirks of real Apple Health exports, one small synthetic export each in Tests/Fixtures/exports, imported with
/// the real `hkq` into the real `hkd`; every count and figure is compared with what Foundation's XML parser reads
/// from the file (``ExportOracle``), never with the importer's own reading.
@Suite("export quirks through hkq import", .serialized)
struct ExportQuirkTests {
    /// The path of the fixture `name` in Tests/Fixtures/exports.
    static func fixture(_ name: String) -> String {
        TestFixtures.packageRoot.appendingPathComponent("Tests/Fixtures/exports/\(name)").path
    }

    /// The JSON value hkq printed.
    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    /// Runs hkq against `hkd` for the subject anna.
    static func hkq(_ hkd: TestServer, _ arguments: [String]) async throws -> (status: Int32, out: String, err: String)
    {
        try await HKQBinaryTests.hkq(hkd.hkqServer + ["--subject", "anna"] + arguments)
    }

    /// The whole content of a `<Workout>` or `<Record>` as the identity sees it: instants instead of their
    /// spelling, a device without its object address, everything else as written.
    static func identity(_ element: ExportOracle.Element) -> String {
        var normalized = element.attributes
        for key in ["startDate", "endDate", "creationDate", "date"] {
            if let instant = element.instant(key) { normalized[key] = String(instant) }
        }
        if let device = normalized["device"], let comma = device.range(of: ">, ") ?? device.range(of: "&gt;, ") {
            normalized["device"] = String(device[comma.upperBound...])
        }
        let pairs = normalized.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let children = element.children.map(identity).sorted()
        return element.name + "(" + pairs.joined(separator: ",") + ")[" + children.joined(separator: ";") + "]"
    }

    @Test("Garmin's repeated workouts: every element stored, groups marked, --distinct totals once per group")
    func garminDuplicateWorkouts() async throws {
        let path = Self.fixture("garmin-duplicate-workouts.xml")
        let oracle = try ExportOracle(path: path)
        let elements = oracle.elements(named: "Workout")
        let objects = Set(elements.map(Self.identity))
        var groups: [String: [ExportOracle.Element]] = [:]
        for element in elements {
            let key = ["workoutActivityType", "startDate", "endDate", "sourceName"].map { element.attributes[$0]! }
            groups[key.joined(separator: "|"), default: []].append(element)
        }
        #expect(elements.count == 60 && objects.count == 60 && groups.count == 21)

        let hkd = try await TestServer()
        let first = try await Self.hkq(hkd, ["import", path, "--format", "json"])
        #expect(first.status == 0, "\(first.out)\(first.err)")
        let summary = try #require(try Self.json(first.out) as? [String: Any])
        #expect(summary["workouts"] as? Int == 60 && summary["workoutsInserted"] as? Int == 60, "\(summary)")
        let again = try await Self.hkq(hkd, ["import", path, "--format", "json"])
        #expect(again.status == 0, "\(again.out)\(again.err)")
        #expect((try Self.json(again.out) as? [String: Any])?["workoutsInserted"] as? Int == 0, "\(again.out)")
        // Workouts alone: the table of samples per type, which would be empty, is left out.
        let table = try await Self.hkq(hkd, ["import", path])
        #expect(table.status == 0 && table.out.hasPrefix("SKIPPED"), "\(table.out)")
        #expect(table.out.contains("60 workouts (0 new, 60 already stored)"), "\(table.out)")

        let listed = try await Self.hkq(hkd, ["workouts", "--format", "json", "--tz", "Europe/Copenhagen"])
        let rows = try #require(try Self.json(listed.out) as? [[String: Any]], "\(listed.out)\(listed.err)")
        #expect(rows.count == 60)
        let repeats = rows.filter { $0["sameAs"] is String }
        #expect(repeats.count == 60 - 21)
        let firsts = Set(rows.filter { !($0["sameAs"] is String) }.compactMap { $0["uuid"] as? String })
        #expect(firsts.count == 21 && Set(repeats.compactMap { $0["sameAs"] as? String }).isSubset(of: firsts))

        // Minutes per month and type, each group once, as the export wrote them (not end − start).
        var expected: [String: Double] = [:]
        let month = DateFormatter()
        month.locale = Locale(identifier: "en_US_POSIX")
        month.timeZone = TimeZone(identifier: "Europe/Copenhagen")
        month.dateFormat = "yyyy-MM"
        for group in groups.values {
            let workout = group[0]
            let start = Date(timeIntervalSince1970: try #require(workout.instant("startDate")))
            let type = workout.attributes["workoutActivityType"]!.replacingOccurrences(
                of: "HKWorkoutActivityType", with: "")
            expected[month.string(from: start) + " " + type.lowercased(), default: 0] +=
                Double(workout.attributes["duration"]!)!
        }
        let totals = try await Self.hkq(
            hkd, ["workouts", "--by", "month", "--distinct", "--format", "json", "--tz", "Europe/Copenhagen"])
        let periods = try #require(try Self.json(totals.out) as? [[String: Any]], "\(totals.out)\(totals.err)")
        var got: [String: Double] = [:]
        for period in periods {
            let name = try #require(period["period"] as? String)
            let type = try #require(period["type"] as? String)
            got[String(name.prefix(7)) + " " + type.lowercased()] = period["duration"] as? Double
        }
        #expect(got.keys.sorted() == expected.keys.sorted())
        for (key, minutes) in expected {
            #expect(abs((got[key] ?? 0) - minutes) < 1e-9 * minutes, "\(key): \(got[key] ?? 0) against \(minutes)")
        }
        #expect(periods.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 21)
        await hkd.stop()
    }

    @Test("records synced twice: identical elements are one sample, elements that differ in anything are two")
    func recordsSyncedTwice() async throws {
        let path = Self.fixture("records-synced-twice.xml")
        let records = try ExportOracle(path: path).elements(named: "Record")
        var objects: [String: Double] = [:]
        for record in records { objects[Self.identity(record)] = Double(record.attributes["value"]!)! }
        #expect(records.count == 17 && objects.count == 13)

        let hkd = try await TestServer()
        let first = try await Self.hkq(hkd, ["import", path, "--format", "json"])
        #expect(first.status == 0, "\(first.out)\(first.err)")
        let again = try await Self.hkq(hkd, ["import", path, "--format", "json"])
        let summary = try #require(try Self.json(again.out) as? [String: Any])
        #expect(summary["inserted"] as? Int == 0 && again.status == 0, "\(again.out)")

        let listed = try await Self.hkq(hkd, ["samples", "stepCount", "--format", "json"])
        let rows = try #require(try Self.json(listed.out) as? [[String: Any]], "\(listed.out)\(listed.err)")
        #expect(rows.count == objects.count)
        #expect(rows.reduce(0) { $0 + ($1["value"] as? Double ?? 0) } == objects.values.reduce(0, +))
        await hkd.stop()
    }

    @Test("an activity summary given twice: alike it is one, with other values the second is named, never fatal")
    func activitySummaryTwice() async throws {
        let path = Self.fixture("activity-summary-twice.xml")
        let elements = try ExportOracle(path: path).elements(named: "ActivitySummary")
        let days = Set(elements.compactMap { $0.attributes["dateComponents"] })
        #expect(elements.count == 9 && days.count == 7)

        let hkd = try await TestServer()
        let imported = try await Self.hkq(hkd, ["import", path, "--format", "json"])
        #expect(imported.status == 3, "some rejected: \(imported.out)\(imported.err)")
        let summary = try #require(try Self.json(imported.out) as? [String: Any])
        #expect(summary["activitySummaries"] as? Int == 7 && summary["activitySummariesChanged"] as? Int == 7)
        let rejected = try #require(summary["rejected"] as? [[String: Any]])
        #expect(rejected.count == 1 && rejected.first?["count"] as? Int == 1, "\(rejected)")
        #expect((rejected.first?["example"] as? String)?.contains("2021-01-05") == true, "\(rejected)")
        let table = try await Self.hkq(hkd, ["import", path])
        #expect(table.out.contains("; 1 activity summary given again alike, counted once"), "\(table.out)")

        let shown = try await Self.hkq(hkd, ["activity", "--format", "json"])
        let rows = try #require(try Self.json(shown.out) as? [[String: Any]], "\(shown.out)\(shown.err)")
        #expect(rows.count == 7)
        // The first of the two 2021-01-05 summaries is kept.
        let fifth = rows.first { ($0["date"] as? String) == "2021-01-05" }
        #expect(fifth?["activeEnergyBurned"] as? Double == 344, "\(rows)")
        await hkd.stop()
    }

    @Test("a data directory an earlier release filled from an export: importing it again renames, never doubles")
    func earlierReleaseDirectory() async throws {
        let path = Self.fixture("earlier-release.xml")
        let oracle = try ExportOracle(path: path)
        var objects: [String: Set<String>] = [:]
        for record in oracle.elements(named: "Record") {
            objects[record.attributes["type"]!, default: []].insert(Self.identity(record))
        }
        #expect(objects["HKQuantityTypeIdentifierStepCount"]?.count == 10)

        let hkd = try await TestServer(directory: try TestDirectory(copyOf: "data-directory-import-0.1.0"))
        let client = hkd.client()
        func perType() async throws -> [String: Int] {
            Dictionary(
                uniqueKeysWithValues: try await client.serverInfo().samplesPerType.map { ($0.type, Int($0.samples)) })
        }
        #expect(try await perType()["stepCount"] == 8, "what the earlier release stored")
        let imported = try await Self.hkq(hkd, ["--subject", "ben", "import", path, "--format", "json"])
        #expect(imported.status == 0, "\(imported.out)\(imported.err)")
        let expected = [
            "stepCount": 10, "bloodPressureSystolic": 1, "bloodPressureDiastolic": 1,
        ]
        #expect(try await perType() == expected)
        let workouts = try await client.workouts(subject: "ben").workouts.map(\.workout)
        #expect(workouts.count == 1 && workouts.first?.uuid != workouts.first?.contentID)
        let routes = try await client.routes(of: try #require(workouts.first).uuid, subject: "ben")
        #expect(routes.map(\.points.count) == [2])
        let correlations = try await client.correlations(subject: "ben").correlations.map(\.correlation)
        #expect(correlations.count == 1)
        let pressure = try await Self.hkq(
            hkd, ["--subject", "ben", "samples", "bloodPressureSystolic,bloodPressureDiastolic", "--format", "json"])
        let members = try #require(try Self.json(pressure.out) as? [[String: Any]]).compactMap { $0["uuid"] as? String }
        #expect(Set(correlations.first?.members.map(\.uuid.uuidString) ?? []) == Set(members))

        let again = try await Self.hkq(hkd, ["--subject", "ben", "import", path, "--format", "json"])
        let summary = try #require(try Self.json(again.out) as? [String: Any], "\(again.out)\(again.err)")
        #expect(summary["inserted"] as? Int == 0 && summary["workoutsInserted"] as? Int == 0)
        #expect(summary["correlationsInserted"] as? Int == 0 && summary["routesInserted"] as? Int == 0)
        client.close()
        #expect(await hkd.stop() == 0)
        let restarted = try await hkd.restart()
        let after = try await restarted.client().serverInfo().samplesPerType
        #expect(Dictionary(uniqueKeysWithValues: after.map { ($0.type, Int($0.samples)) }) == expected)
        await restarted.stop()
    }
}
