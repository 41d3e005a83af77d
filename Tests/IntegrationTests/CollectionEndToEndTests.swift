import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Statistics collections through the real hkd, the client library and hkq: buckets, merging, priorities,
/// units, streaming and errors.
@Suite("collections end to end", .serialized)
struct CollectionEndToEndTests {
    static let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")
    static let phone = SourceInfo(name: "iPhone", bundleIdentifier: "com.apple.health.phone")
    /// 2024-03-09T05:00Z: midnight in New York, the day before spring-forward.
    static let saturday: Timestamp = 1_709_960_400_000_000

    static func sample(_ start: Timestamp, _ minutes: Int64, _ value: Double, _ source: SourceInfo) throws -> Sample {
        Sample(
            subject: "anna", type: try QuantityType.named("stepCount"), start: start,
            end: start + minutes * Micros.minute, value: value, unit: try HealthUnit(parsing: "count"), source: source)
    }

    @Test("daily sums in New York across spring-forward, merged across iPhone and Watch, and through hkq")
    func dailySums() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        let sunday = Self.saturday + Micros.day
        // Saturday: Watch 600 over 10:00–11:00 local; iPhone 300 over 10:30–11:30 (half of it overlapping).
        // Sunday (23 hours): Watch 100 over 23:30–00:30 local, straddling into Monday.
        _ = try await client.insert([
            try Self.sample(Self.saturday + 10 * Micros.hour, 60, 600, Self.watch),
            try Self.sample(Self.saturday + 10 * Micros.hour + 30 * Micros.minute, 60, 300, Self.phone),
            try Self.sample(sunday + 22 * Micros.hour + 30 * Micros.minute, 60, 100, Self.watch),
        ])
        let query = CollectionQuery(
            subject: "anna", type: "stepCount", options: [.cumulativeSum, .separateBySource],
            anchor: Self.saturday, interval: CalendarInterval(1, .day), timeZone: "America/New_York")
        let result = try await client.collection(query)
        #expect(result.unit == "count")
        let monday = sunday + 23 * Micros.hour
        #expect(result.buckets.map(\.start) == [Self.saturday, sunday, monday])
        #expect(result.buckets.map(\.end) == [sunday, monday, monday + Micros.day])
        // Saturday: Watch 600 + the iPhone's half hour alone (150); the by-source figures are the raw sums.
        #expect(result.buckets.map(\.figures.sum) == [750, 50, 50])
        #expect(result.buckets[0].bySource.map(\.source.name) == ["Watch", "iPhone"])
        #expect(result.buckets[0].bySource.map(\.figures.sum) == [600, 300])

        // iPhone first: it takes 10:30–11:00 from the Watch.
        let order = try await client.setSourcePriority("stepCount", subject: "anna", order: ["iPhone"])
        #expect(order.map(\.name) == ["iPhone", "Watch"])
        let reordered = try await client.collection(query)
        #expect(reordered.buckets.first?.figures.sum == 600)

        // Through hkq: CSV, then the chart.
        let server = ["--server", "127.0.0.1:\(hkd.port)", "--token", hkd.token, "--subject", "anna"]
        let csv = await run(
            ["collection", "stepCount", "--tz", "America/New_York", "--anchor", "2024-03-09", "--format", "csv"]
                + server)
        #expect(csv.status == 0, "\(csv.err)")
        #expect(
            csv.out
                == "start,end,sum,unit\n2024-03-09T00:00:00-05:00,2024-03-10T00:00:00-05:00,600,count\n"
                + "2024-03-10T00:00:00-05:00,2024-03-11T00:00:00-04:00,50,count\n"
                + "2024-03-11T00:00:00-04:00,2024-03-12T00:00:00-04:00,50,count\n"
        )
        let chart = await run(
            [
                "collection", "stepCount", "--tz", "America/New_York", "--from", "2024-03-08", "--through",
                "2024-03-11",
                "--format", "chart",
            ] + server)
        #expect(chart.status == 0, "\(chart.err)")
        let lines = chart.out.split(separator: "\n")
        #expect(lines.count == 5)
        #expect(lines.dropFirst().allSatisfy { $0.count <= 80 })
        #expect(lines[1].hasPrefix("2024-03-08") && lines[1].hasSuffix(" -"))
        #expect(lines[2].hasPrefix("2024-03-09 ████") && lines[2].hasSuffix(" 600"))
        let sources = await run(["sources", "stepCount", "--format", "csv"] + server)
        #expect(sources.out.hasPrefix("rank,name,bundleIdentifier,version,device\n1,iPhone,"))
        #expect(await hkd.stop() == 0)
    }

    @Test("many buckets stream in several frames; units convert; bad zones and intervals get their codes")
    func streamingUnitsAndErrors() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        _ = try await client.insert([try Self.sample(Self.saturday, 60, 120, Self.watch)])
        // 150 days of 15-minute buckets: 14,400 buckets, more than one 10,000-bucket frame.
        let long = CollectionQuery(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: Self.saturday,
            interval: CalendarInterval(15, .minute), timeZone: "UTC", enumerateFrom: Self.saturday,
            enumerateTo: Self.saturday + 150 * Micros.day - 1)
        let buckets = try await client.collection(long).buckets
        #expect(buckets.count == 14_400)
        #expect(buckets.prefix(4).map(\.figures.sum) == [30, 30, 30, 30])
        #expect(buckets.dropFirst(4).allSatisfy { $0.figures.sum == nil })
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.end == $1.start })

        var water = CollectionQuery(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: 15 * Micros.minute,
            interval: CalendarInterval(1, .hour), timeZone: "Asia/Kathmandu", unit: "count")
        // Hours are elapsed time from the anchor: boundaries at hh:15 whatever the zone.
        #expect(try await client.collection(water).buckets.map(\.figures.sum) == [30, 90])
        water.timeZone = "Mars/Olympus_Mons"
        await expectCode(.invalidTimeZone) { try await client.collection(water) }
        water.timeZone = "UTC"
        water.unit = "kg"
        await expectCode(.incompatibleUnit) { try await client.collection(water) }
        water.unit = ""
        water.interval = CalendarInterval(1, .second)
        water.enumerateFrom = 0
        water.enumerateTo = 30 * Micros.day
        await expectCode(.invalidInterval) { try await client.collection(water) }
        // The connection is still usable.
        #expect(
            try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum)?.statistics.figures.sum
                == 120)
        #expect(await hkd.stop() == 0)
    }

    @Test("manual entries as an export writes them rank first and count in hkq's merged sums, across restarts")
    func manualEntriesRankFirst() async throws {
        let first = try await TestServer()
        let files = try TestDirectory(prefix: "hkq-manual")
        // As `hkq import` reads an export: the iPhone by its name, Garmin Connect, and the Health app's manual
        // entry with `<MetadataEntry key="HKWasUserEntered" value="1"/>`. The iPhone counted 200 steps of a walk
        // the person entered as 500; Garmin's 800 lie under the iPhone's 700.
        let path = files.appending("day.jsonl")
        let row = #"{"type":"stepCount","unit":"count","#
        try Data(
            """
            \(row)"start":"2024-03-11T08:00:00Z","end":"2024-03-11T09:00:00Z","value":200,"source":"Anna’s iPhone"}
            \(row)"start":"2024-03-11T09:00:00Z","end":"2024-03-11T10:00:00Z","value":700,"source":"Anna’s iPhone"}
            \(row)"start":"2024-03-11T09:00:00Z","end":"2024-03-11T10:00:00Z","value":800,"source":"Connect"}
            \(row)"start":"2024-03-11T08:00:00Z","end":"2024-03-11T09:00:00Z","value":500,"source":"Health",\
            "metadata":{"HKWasUserEntered":1}}

            """.utf8
        ).write(to: URL(fileURLWithPath: path))
        func server(_ hkd: TestServer) -> [String] { hkd.hkqServer + ["--subject", "anna"] }
        let inserted = await run(["insert", path] + server(first))
        #expect(inserted.status == 0, "\(inserted.err)")

        func expectManualFirst(_ hkd: TestServer, _ when: String) async throws {
            let sources = await run(["sources", "stepCount", "--format", "csv"] + server(hkd))
            #expect(sources.status == 0, "\(sources.err)")
            // Was iPhone, Health, Connect, without the manual 500 in any merged sum.
            #expect(
                sources.out.split(separator: "\n").map { $0.split(separator: ",").prefix(2).joined(separator: ",") }
                    == ["rank,name", "1,Health", "2,Anna’s iPhone", "3,Connect"], "\(when): \(sources.out)")
            let stats = await run(
                ["stats", "stepCount", "--options", "sum", "--format", "json", "--tz", "UTC"] + server(hkd))
            #expect(stats.status == 0, "\(stats.err)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(stats.out.utf8)) as? [String: Any], "\(stats.out)")
            // 08–09: the manual 500, not the iPhone's 200; 09–10: the iPhone's 700, not Garmin's 800.
            #expect(object["sum"] as? Double == 1200, "\(when): \(stats.out)")
            let day = await run(
                ["collection", "stepCount", "--tz", "UTC", "--anchor", "2024-03-11", "--format", "csv"] + server(hkd))
            #expect(
                day.out == "start,end,sum,unit\n2024-03-11T00:00:00Z,2024-03-12T00:00:00Z,1200,count\n",
                "\(when): \(day.out) \(day.err)")
        }
        try await expectManualFirst(first, "as inserted")
        // Killed: the order comes back from the log.
        await first.kill()
        let replayed = try await first.restart()
        try await expectManualFirst(replayed, "after replaying the log")
        // Stopped cleanly (a snapshot): the order comes back from the snapshot.
        #expect(await replayed.stop() == 0)
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: replayed.dataDirectory + "/snapshots")
        #expect(snapshots.contains { $0.hasPrefix("stepCount-") }, "\(snapshots)")
        let restored = try await replayed.restart()
        try await expectManualFirst(restored, "after a snapshot")
        // An explicit order still wins.
        let set = await run(
            ["sources", "stepCount", "--priority", "Anna’s iPhone", "--format", "csv"] + server(restored))
        #expect(set.out.split(separator: "\n").dropFirst().first?.hasPrefix("1,Anna’s iPhone,") == true, "\(set.out)")
        let stats = await run(
            ["stats", "stepCount", "--options", "sum", "--format", "csv", "--tz", "UTC"] + server(restored))
        #expect(stats.out.hasSuffix(",900\n"), "\(stats.out)")
        #expect(await restored.stop() == 0)
    }

    private func expectCode(_ code: ErrorCode, _ body: () async throws -> CollectionResult) async {
        do {
            _ = try await body()
            Issue.record("expected error \(code.rawValue)")
        } catch let error as HealthClientError {
            #expect(error.code.rawValue == code.rawValue, "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    private func run(_ arguments: [String]) async -> (status: Int32, out: String, err: String) {
        let (console, out, err) = Console.capturing()
        let status = await HKQ.standard.run(arguments: arguments, environment: [:], console: console)
        return (status, out.text, err.text)
    }
}
