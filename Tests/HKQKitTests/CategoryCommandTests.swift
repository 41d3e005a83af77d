import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HKQKit

/// Category samples through hkq against the real hkd: insert by value name, samples by name and `--value`,
/// stats by value, and `hkq sleep` per night (HEALTHKIT.md §12).
@Suite(.serialized, .liveServer) struct CategoryCommandTests {
    /// One night in Berlin, 2026-03-28 to 29 (clocks spring forward at 02:00), in UTC: an iPhone in bed
    /// 21:00Z–06:00Z (9 h from 22:00 CET), a Watch with stages 22:00Z–05:30Z and a third-party app asleep
    /// 21:30Z–06:30Z. With the Watch first, then the iPhone, then the app: in bed 1 h 30 (21:00–22:00, 05:30–06:00),
    /// the Watch's stages 7 h 30, the app's asleep 30 min (06:00–06:30): 9 h 30 in all.
    static let night = """
        type,start,end,value,unit,source,bundleIdentifier
        sleepAnalysis,2026-03-28T21:00:00Z,2026-03-29T06:00:00Z,inBed,,Anna's iPhone,com.apple.health.phone
        sleepAnalysis,2026-03-28T21:30:00Z,2026-03-29T06:30:00Z,HKCategoryValueSleepAnalysisAsleep,,SleepApp,com.example.sleep
        sleepAnalysis,2026-03-28T22:00:00Z,2026-03-29T00:00:00Z,HKCategoryValueSleepAnalysisAsleepCore,,Anna's Watch,com.apple.health.watch
        sleepAnalysis,2026-03-29T00:00:00Z,2026-03-29T01:00:00Z,asleepDeep,,Anna's Watch,com.apple.health.watch
        sleepAnalysis,2026-03-29T01:00:00Z,2026-03-29T01:15:00Z,2,,Anna's Watch,com.apple.health.watch
        sleepAnalysis,2026-03-29T01:15:00Z,2026-03-29T03:00:00Z,asleepREM,,Anna's Watch,com.apple.health.watch
        sleepAnalysis,2026-03-29T03:00:00Z,2026-03-29T05:30:00Z,asleepCore,,Anna's Watch,com.apple.health.watch

        """

    static func insertNight(subject: String) async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file("night-\(subject).csv", night)
        let inserted = try await runLive(["insert", path], subject: subject)
        #expect(inserted.status == 0, "\(inserted.err)")
        #expect(inserted.out.contains("sleepAnalysis     7         7               0"), "\(inserted.out)")
        let priority = try await runLive(
            ["sources", "sleepAnalysis", "--priority", "Anna's Watch,Anna's iPhone,SleepApp"], subject: subject)
        #expect(priority.status == 0, "\(priority.err)")
    }

    @Test("insert by value name, samples print names, --value selects values, a bad name is refused by name")
    func insertAndSamples() async throws {
        try await Self.insertNight(subject: "category-samples")
        let all = try await runLive(
            ["samples", "sleepAnalysis", "--tz", "Europe/Berlin", "--from", "2026-03-28", "--format", "json"],
            subject: "category-samples")
        let rows: [[String: Any]] = try json(all.out)
        #expect(
            rows.map { $0["value"] as? String } == [
                "inBed", "asleepUnspecified", "asleepCore", "asleepDeep", "awake", "asleepREM", "asleepCore",
            ])
        #expect(rows.allSatisfy { $0["unit"] as? String == "" })
        let table = try await runLive(
            ["samples", "sleepAnalysis", "--tz", "Europe/Berlin", "--value", "asleepCore,asleepDeep"],
            subject: "category-samples")
        #expect(table.status == 0, "\(table.err)")
        let lines = table.out.split(separator: "\n")
        #expect(lines.count == 4, "\(table.out)")
        #expect(lines[1].contains("2026-03-28 23:00:00 +01:00") && lines[1].contains("asleepCore"), "\(table.out)")
        #expect(lines[2].contains("asleepDeep"), "\(table.out)")

        let unknown = try await runLive(
            ["samples", "sleepAnalysis", "--value", "napping"], subject: "category-samples")
        #expect(unknown.status == 64)
        #expect(unknown.err.contains("'napping' is not a value of sleepAnalysis"), "\(unknown.err)")

        let live = try #require(LiveServer.current)
        let bad = try live.file(
            "bad.jsonl",
            #"{"type":"sleepAnalysis","start":"2026-03-28T21:00:00Z","end":"2026-03-28T22:00:00Z","value":"dozing","source":"x"}"#
                + "\n")
        let refused = try await runLive(["insert", bad], subject: "category-samples")
        #expect(refused.status == 3, "the row is rejected, named, and the command ends with status 3")
        #expect(
            refused.err.contains("value \"dozing\" is not a value of category type sleepAnalysis"), "\(refused.err)")
        let good = try live.file(
            "good.jsonl",
            #"{"type":"HKCategoryTypeIdentifierAppleStandHour","start":"2026-03-28T10:00:00Z","end":"2026-03-28T11:00:00Z","value":"stood","source":"Watch"}"#
                + "\n")
        let stored = try await runLive(["insert", good], subject: "category-samples")
        #expect(stored.status == 0, "\(stored.err)")
        let stand = try await runLive(["samples", "appleStandHour", "--format", "csv"], subject: "category-samples")
        #expect(stand.out.contains(",stood,,Watch,"), "\(stand.out)")

        let tagged = try live.file(
            "tagged.jsonl",
            [
                #"{"type":"sleepAnalysis","start":"2026-03-30T21:00:00Z","end":"2026-03-30T22:00:00Z","value":"inBed","source":"x","metadata":{"HKTimeZone":"Europe/Berlin","n":2}}"#,
                #"{"type":"sleepAnalysis","start":"2026-03-31T21:00:00Z","end":"2026-03-31T22:00:00Z","value":"awake","source":"x","metadata":{"HKTimeZone":"UTC"}}"#,
            ].joined(separator: "\n") + "\n")
        #expect(try await runLive(["insert", tagged], subject: "category-samples").status == 0)
        func selected(_ predicate: [String]) async throws -> [String?] {
            let result = try await runLive(
                ["samples", "sleepAnalysis", "--format", "json"] + predicate, subject: "category-samples")
            #expect(result.status == 0, "\(result.err)")
            let rows: [[String: Any]] = try json(result.out)
            return rows.map { $0["value"] as? String }
        }
        #expect(try await selected(["--metadata", "HKTimeZone"]) == ["inBed", "awake"])
        #expect(try await selected(["--metadata", "HKTimeZone=Europe/Berlin"]) == ["inBed"])
        #expect(try await selected(["--metadata", "n=2", "--metadata", "HKTimeZone"]) == ["inBed"])
        #expect(try await selected(["--metadata", "n=3"]) == [])
        let empty = try await runLive(["samples", "sleepAnalysis", "--metadata", "=x"], subject: "category-samples")
        #expect(empty.status == 64)
    }

    @Test("stats by value: the merged figures, checked by hand, and each source's own")
    func statsByValue() async throws {
        try await Self.insertNight(subject: "category-stats")
        let result = try await runLive(
            ["stats", "sleepAnalysis", "--options", "duration,by-value,by-source", "--format", "json"],
            subject: "category-stats")
        #expect(result.status == 0, "\(result.err)")
        let object: [String: Any] = try json(result.out)
        #expect(object["unit"] as? String == "")
        #expect(object["duration"] as? Double == 9.5 * 3600)
        // In bed yields to the app's sleep at 22:30–23:00 and 06:30–07:30 (HEALTHKIT.md §12).
        #expect(object["inBed"] as? Double == 0.5 * 3600)
        #expect(object["asleepUnspecified"] as? Double == 1.5 * 3600)
        #expect(object["asleepCore"] as? Double == 4.5 * 3600)
        #expect(object["asleepDeep"] as? Double == 3600)
        #expect(object["awake"] as? Double == 0.25 * 3600)
        #expect(object["asleepREM"] as? Double == 1.75 * 3600)
        let sources = try #require(object["sources"] as? [[String: Any]])
        #expect(sources.map { $0["source"] as? String } == ["Anna's Watch", "Anna's iPhone", "SleepApp"])
        #expect(sources[1]["inBed"] as? Double == 32_400.0)
        let table = try await runLive(["stats", "sleepAnalysis"], subject: "category-stats")
        let core = table.out.split(separator: "\n").first { $0.hasPrefix("ASLEEP CORE ") }
        #expect(core?.hasSuffix(" 4h 30m") == true, "\(table.out)")
    }

    @Test("hkq sleep: the night by hand in JSON, CSV and a table; empty nights listed; DST night 23 hours")
    func sleepNights() async throws {
        try await Self.insertNight(subject: "category-sleep")
        let arguments = ["sleep", "--tz", "Europe/Berlin", "--from", "2026-03-28", "--to", "2026-03-31"]
        let result = try await runLive(arguments + ["--format", "json"], subject: "category-sleep")
        #expect(result.status == 0, "\(result.err)")
        let nights: [[String: Any]] = try json(result.out)
        #expect(nights.map { $0["night"] as? String } == ["2026-03-28", "2026-03-29", "2026-03-30"])
        #expect(nights[0]["inBed"] is NSNull)
        let night = nights[1]
        #expect(night["start"] as? String == "2026-03-28T18:00:00+01:00")
        #expect(night["end"] as? String == "2026-03-29T18:00:00+02:00")
        #expect(night["inBed"] as? Double == 9.5 * 3600)
        #expect(night["asleep"] as? Double == (4.5 + 1 + 1.75 + 1.5) * 3600)
        #expect(night["awake"] as? Double == 0.25 * 3600)
        #expect(night["asleepCore"] as? Double == 4.5 * 3600)
        #expect(night["asleepDeep"] as? Double == 3600)
        #expect(night["asleepREM"] as? Double == 1.75 * 3600)
        #expect(night["asleepUnspecified"] as? Double == 1.5 * 3600)
        #expect(night["inBedOnly"] as? Double == 0.5 * 3600)

        let table = try await runLive(arguments, subject: "category-sleep")
        let lines = table.out.split(separator: "\n").map(String.init)
        #expect(
            lines[0].split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                == "NIGHT IN BED ASLEEP AWAKE CORE DEEP REM UNSPECIFIED IN BED ONLY")
        let cells = lines[2].components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        #expect(cells.prefix(4) == ["2026-03-29", "9h 30m", "8h 45m", "15m"], "\(table.out)")

        let csv = try await runLive(arguments + ["--format", "csv"], subject: "category-sleep")
        #expect(csv.out.hasPrefix("night,start,end,inBed,asleep,awake,asleepCore,asleepDeep,asleepREM,"))
        #expect(csv.out.contains("2026-03-29,2026-03-28T18:00:00+01:00,2026-03-29T18:00:00+02:00,34200,31500,900,"))

        let chart = try await runLive(arguments + ["--format", "chart"], subject: "category-sleep")
        let bars = chart.out.split(separator: "\n").map(String.init)
        #expect(bars.first == "hours asleep, 3 nights")
        #expect(bars[1].hasPrefix("2026-03-28 ") && bars[1].hasSuffix(" -"), "\(chart.out)")
        #expect(bars[2].hasPrefix("2026-03-29 █") && bars[2].hasSuffix(" 8.8"), "\(chart.out)")
        #expect(bars.allSatisfy { $0.count <= 80 })

        // Noon nights: the same samples, all in the night ending 2026-03-29 at noon.
        let noon = try await runLive(arguments + ["--anchor", "12:00", "--format", "json"], subject: "category-sleep")
        let noonNights: [[String: Any]] = try json(noon.out)
        #expect(noonNights[1]["inBed"] as? Double == 9.5 * 3600)
        let badAnchor = try await runLive(["sleep", "--anchor", "25:00"], subject: "category-sleep")
        #expect(badAnchor.status == 64)
    }
}
