import Foundation
import HealthClient
import HealthImport
import HealthModel
import Synchronization
import TestSupport
import Testing

@testable import HKQKit

/// The real export, in Tests/Fixtures.
func realExportPath() throws -> String {
    let path = TestFixtures.realExportPath
    try #require(FileManager.default.fileExists(atPath: path), "the real export is missing: expected \(path)")
    return path
}

/// A small export.xml around `records`, shaped like the Health app's.
func exportDocument(_ records: [String]) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE HealthData [
    <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>
    ]>
    <HealthData locale="en_US">
     <ExportDate value="2018-04-15 22:29:28 -0400"/>
     <Me HKCharacteristicTypeIdentifierDateOfBirth="1984-05-01"/>
    \(records.joined(separator: "\n"))
    </HealthData>

    """
}

/// One quantity `<Record>` line.
func exportRecord(
    type: String = "HKQuantityTypeIdentifierStepCount", unit: String = "count", value: String = "10",
    start: String = "2017-01-21 15:53:00 -0400", end: String = "2017-01-21 15:58:00 -0400"
) -> String {
    " <Record type=\"\(type)\" sourceName=\"iPhone\" sourceVersion=\"10.2\" unit=\"\(unit)\" "
        + "creationDate=\"\(end)\" startDate=\"\(start)\" endDate=\"\(end)\" value=\"\(value)\"/>"
}

/// `hkq import` against the real hkd binary: the real export end to end, re-import, malformed files.
@Suite(.serialized, .liveServer) struct ExportImportCommandTests {
    /// Samples per type in the real export, counted independently with `unzip -p … | grep -c`.
    static let realCounts: [String: Int] = [
        "distanceWalkingRunning": 12_371, "stepCount": 12_250, "flightsClimbed": 1_338, "bodyMass": 2, "height": 1,
        "bodyMassIndex": 1, "sleepAnalysis": 107,
    ]

    /// The server's sample count per type (all subjects).
    static func samplesPerType() async throws -> [String: Int] {
        let info = try await runLive(["server-info", "--format", "json"], subject: "nobody")
        #expect(info.status == 0, "\(info.err)")
        let object = try json(info.out, as: [String: Any].self)
        return (object["samplesPerType"] as? [String: Any] ?? [:]).mapValues { ($0 as? Int) ?? -1 }
    }

    @Test("the real export: counts per type, daily step sums, and a second import adding nothing")
    func realExport() async throws {
        let path = try realExportPath()
        let before = try await Self.samplesPerType()
        let first = try await runLive(["import", path, "--format", "json"], subject: "rob")
        #expect(first.status == 0, "\(first.err)")
        #expect(first.err.isEmpty, "no progress bar when stderr is not a terminal")
        let summary = try json(first.out, as: [String: Any].self)
        #expect(summary["recordsSeen"] as? Int == 26_070)
        #expect(summary["samples"] as? Int == 26_070)
        #expect(summary["inserted"] as? Int == 26_070)
        #expect(summary["categorySamples"] as? Int == 107)
        #expect(summary["alreadyStored"] as? Int == 0)
        let imported = try #require(summary["imported"] as? [[String: Any]])
        var perType: [String: Int] = [:]
        for entry in imported {
            let type = try #require(entry["type"] as? String)
            perType[type] = entry["samples"] as? Int
            #expect(entry["inserted"] as? Int == entry["samples"] as? Int, "\(type)")
        }
        #expect(perType == Self.realCounts)
        let skipped = try #require(summary["skipped"] as? [[String: Any]])
        #expect(skipped.map { $0["kind"] as? String }.contains("HKCategoryTypeIdentifierSleepAnalysis") == false)
        #expect((summary["rejected"] as? [Any])?.isEmpty == true)

        let after = try await Self.samplesPerType()
        for (type, count) in Self.realCounts { #expect(after[type, default: 0] - before[type, default: 0] == count) }

        // One source only, so the merged daily sum is the raw sum of the file's records.
        let sources = try await runLive(["sources", "stepCount", "--format", "json"], subject: "rob")
        #expect(try json(sources.out, as: [[String: Any]].self).count == 1)
        // Daily sums for −04:00 days, computed once from the XML with Python, then here from the samples the
        // server returns, and compared with the server's statistics.
        for (day, expected) in [("2016-02-25", 1_391.0), ("2017-07-13", 16_393.0), ("2018-04-14", 2_079.0)] {
            let nextDay = try #require(Self.nextDay[day])
            let range = ["--from", "\(day)T00:00:00-04:00", "--to", "\(nextDay)T00:00:00-04:00"]
            let samples = try await runLive(["samples", "stepCount", "--format", "json"] + range, subject: "rob")
            let rows = try json(samples.out, as: [[String: Any]].self)
            let sum = rows.reduce(0.0) { $0 + (($1["value"] as? Double) ?? 0) }
            #expect(sum == expected, "samples on \(day)")
            let stats = try await runLive(["stats", "stepCount", "--format", "json"] + range, subject: "rob")
            #expect(try json(stats.out, as: [String: Any].self)["sum"] as? Double == expected, "stats on \(day)")
        }

        let second = try await runLive(["import", path], subject: "rob")
        #expect(second.status == 0, "\(second.err)")
        #expect(second.out.contains("(0 new, 26070 already stored)"), "\(second.out)")
        #expect(second.out.contains("stepCount                 12250    0           12250"), "\(second.out)")
        #expect(try await Self.samplesPerType() == after)
    }

    static let nextDay = ["2016-02-25": "2016-02-26", "2017-07-13": "2017-07-14", "2018-04-14": "2018-04-15"]

    @Test("a record with an unknown unit is rejected with its line; the others are stored")
    func unknownUnit() async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file(
            "export.xml",
            exportDocument([
                exportRecord(value: "12"), exportRecord(unit: "furlong", value: "3"),
                " <Record type=\"HKCategoryTypeIdentifierSleepAnalysis\" sourceName=\"iPhone\" "
                    + "startDate=\"2017-01-21 01:00:00 -0400\" endDate=\"2017-01-21 07:00:00 -0400\" "
                    + "value=\"HKCategoryValueSleepAnalysisAsleep\"/>",
                exportRecord(value: "1e3", start: "2017-01-21 16:00:00 -0400", end: "2017-01-21 16:05:00 -0400"),
            ]))
        let run = try await runLive(["import", path], subject: "units")
        #expect(run.status == 3, "the rejected record makes the status 3: \(run.err)")
        #expect(run.out.contains("stepCount            2    2               0"), "\(run.out)")
        #expect(run.out.contains("sleepAnalysis        1    1               0"), "\(run.out)")
        #expect(run.out.contains("Record    unknown unit \"furlong\"      1  9"), "\(run.out)")
        #expect(
            run.out.contains(
                "(3 new, 0 already stored); 1 of them a category sample; 1 characteristic from <Me> (stored); "
                    + "skipped 2 elements; rejected 1 element"),
            "\(run.out)")

        let sum = try await runLive(["stats", "stepCount", "--format", "json"], subject: "units")
        #expect(try json(sum.out, as: [String: Any].self)["sum"] as? Double == 1_012)

        let asJSON = try await runLive(["import", path, "--format", "json"], subject: "units")
        let object = try json(asJSON.out, as: [String: Any].self)
        #expect(object["characteristics"] as? Int == 1, "the date of birth of <Me>")
        let rejected = try #require(object["rejected"] as? [[String: Any]])
        #expect(rejected.count == 1)
        #expect(rejected.first?["reason"] as? String == "unknown unit \"furlong\"")
        #expect(rejected.first?["firstLines"] as? [Int] == [9])
    }

    @Test("malformed files give one clear error line and exit 65 (bad input)")
    func malformedFiles() async throws {
        let live = try #require(LiveServer.current)
        let real = try Data(contentsOf: URL(fileURLWithPath: try realExportPath()))
        let truncated = live.directory.appendingPathComponent("truncated-export.zip")
        try real.prefix(real.count / 2).write(to: truncated)
        let brokenXML = try live.file(
            "export.xml", exportDocument([exportRecord(), " <Record type=\"HKQuantityTypeIdentifierStepCount\" <oops"]))
        let notExport = try live.file("notes.txt", "just some notes\n")
        let cases: [(path: String, message: String)] = [
            (truncated.path, "truncated-export.zip\" is truncated or not a valid zip"),
            (brokenXML, "malformed XML on line 9"),
            (notExport, "is not an Apple Health export"),
            (live.directory.appendingPathComponent("missing.zip").path, "missing.zip\": no such file"),
        ]
        for (path, message) in cases {
            let run = try await runLive(["import", path], subject: "broken")
            #expect(run.status == 65, "\(path)")
            #expect(run.out.isEmpty, "\(run.out)")
            #expect(run.err.hasPrefix("error: ") && run.err.contains(message), "\(run.err)")
            #expect(run.err.split(separator: "\n").count == 1, "\(run.err)")
        }
    }

    @Test("a route the server refuses is a rejection; the other routes of its request are stored")
    func refusedRoutes() async throws {
        let live = try #require(LiveServer.current)
        let client = live.server.client()
        defer { client.close() }
        let start: Timestamp = 1_704_093_120_000_000
        let workout = Workout(
            activityType: .running, start: start, end: start + Micros.hour, source: SourceInfo(name: "Watch"))
        _ = try await client.insertWorkouts([workout], subject: "routes")
        func route(_ number: Int, latitude: Double = 48.85, speed: Double = 3) -> WorkoutRoute {
            WorkoutRoute(
                workout: workout.uuid, path: "/workout-routes/route_\(number).gpx",
                points: [RoutePoint(time: start + Int64(number), latitude: latitude, longitude: 2.29, speed: speed)])
        }
        // Stored before with other points: the import's route of the same identity conflicts.
        _ = try await client.insertRoutes([route(10, latitude: 10)], subject: "routes")
        var routes = (0..<11).map { route($0) }
        routes[3] = route(3, speed: -1e308)  // a speed no Float holds: the server refuses it (invalidSample)
        let stored = try await ImportCommand.send(routes, client: client, subject: "routes")
        #expect(stored.counts.inserted == 9 && stored.counts.duplicates == 0)
        #expect(stored.refused.count == 2)
        #expect(stored.refused.first?.detail.contains("/workout-routes/route_3.gpx") == true, "\(stored.refused)")
        #expect(stored.refused.last?.detail.contains("/workout-routes/route_10.gpx") == true, "\(stored.refused)")
        #expect(
            stored.refused.map(\.reason) == [
                "refused by the server (invalidSample)", "refused by the server (uuidConflict)",
            ])
        let storedOnes = routes.enumerated().filter { ![3, 10].contains($0.offset) }.map(\.element)
        let again = try await client.insertRoutes(storedOnes, subject: "routes")
        #expect(again.inserted == 0 && again.duplicates == 9)
        #expect(stored.refused.first?.detail.contains("its speed is not a finite 32-bit float") == true)
    }

    @Test("a dry run reads the file without a server")
    func dryRun() async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file("export.xml", exportDocument([exportRecord(), exportRecord(value: "2.5e1")]))
        let run = await runHKQ(["--server", "127.0.0.1:1", "import", path, "--dry-run"])
        #expect(run.status == 0, "\(run.err)")
        #expect(run.out.contains("TYPE       SAMPLES\nstepCount        2\n"), "\(run.out)")
        #expect(run.out.contains("dry run: read 2 samples from"), "\(run.out)")
    }

    @Test("on a terminal the progress bar is redrawn on stderr and erased before the summary")
    func progressOnTerminal() async throws {
        let live = try #require(LiveServer.current)
        let ticks = TickingClock(step: 0.05)
        let command = ImportCommand(showsProgress: { true }, clock: { ticks.next() })
        let program = HKQ(commands: [command])
        let run = await runHKQ(
            ["--server", live.address, "--token", live.token, "--subject", "progress", "import", try realExportPath()],
            program: program)
        #expect(run.status == 0, "\(run.err)")
        let draws = run.err.split(separator: "\r").filter { $0.hasPrefix("[") }
        #expect(draws.count >= 2, "\(run.err)")
        #expect(draws.allSatisfy { $0.contains("records/s") && $0.contains("KiB") })
        #expect(run.err.hasSuffix("\r"), "the last write erases the bar")
        #expect(!run.out.contains("\r"))
        #expect(run.out.contains("imported 26070 samples"))
    }
}

/// A clock advancing by `step` seconds each time it is read.
final class TickingClock: Sendable {
    private let ticks = Mutex(0)
    let step: Double
    init(step: Double) { self.step = step }
    func next() -> Double {
        ticks.withLock { ticks in
            ticks += 1; return Double(ticks) * step
        }
    }
}

/// The progress bar's line and throttling, with a fake clock.
@Suite struct ProgressBarTests {
    @Test func lineShowsBarBytesRateAndTimeLeft() {
        let progress = ImportProgress(bytesRead: 3 << 20, totalBytes: 12 << 20, recordsSeen: 90_000, samplesImported: 0)
        #expect(
            ProgressBar.line(progress, elapsed: 0.5)
                == "[######..................]  25%  3 MiB / 12 MiB  180,000 records/s  0:02 left")
        let done = ImportProgress(bytesRead: 12 << 20, totalBytes: 12 << 20, recordsSeen: 1_000, samplesImported: 0)
        #expect(ProgressBar.line(done, elapsed: 4000).hasSuffix("0:00 left"))
        #expect(ProgressBar.clock(seconds: 3_725) == "1:02:05")
        #expect(ProgressBar.grouped(1_234_567) == "1,234,567")
        #expect(ProgressBar.grouped(999) == "999")
    }

    @Test func redrawsAtMostTenTimesASecondAndClears() {
        let (console, _, err) = Console.capturing()
        let now = Mutex(0.0)
        let bar = ProgressBar(sink: console.err, clock: { now.withLock { $0 } })
        func at(_ seconds: Double, _ bytes: Int64) {
            now.withLock { $0 = seconds }
            bar.update(ImportProgress(bytesRead: bytes, totalBytes: 100, recordsSeen: Int(bytes), samplesImported: 0))
        }
        at(0.01, 10)
        at(0.05, 20)
        at(0.08, 30)
        at(0.2, 40)
        #expect(err.text.split(separator: "\r").count == 2)
        #expect(err.text.contains(" 10%") && err.text.contains(" 40%") && !err.text.contains(" 20%"))
        bar.clear()
        #expect(err.text.hasSuffix("\r"))
        #expect(err.text.split(separator: "\r").last?.allSatisfy { $0 == " " } == true)
    }
}
