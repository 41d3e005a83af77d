import Foundation
import HealthModel
import HealthWire
import Testing

@testable import HKQKit

/// `hkq collection`'s pieces that need no server: dates in its zone, option names, and the bar chart.
@Suite struct CollectionCommandTests {
    static let newYork = DateArgumentParser(
        timeZone: TimeZone(identifier: "America/New_York")!, now: 1_710_000_000 * Micros.second)

    @Test(
        "dates are local to the zone unless they carry Z or an offset",
        arguments: [
            ("2024-03-10", 1_710_046_800),  // midnight EST
            ("2024-03-10T03:00", 1_710_054_000),  // 03:00 EDT, just after the gap
            ("2024-03-10T02:30", 1_710_055_800),  // inside the gap: moved later by it, to 03:30 EDT
            ("2024-07-01T12:34:56Z", 1_719_837_296),
            ("2024-07-01T12:00+05:45", 1_719_814_500),
            ("2024-07-01T12:00-03:00", 1_719_846_000),
        ] as [(String, Int64)])
    func dates(text: String, seconds: Int64) {
        #expect(Self.newYork.parse(text) == seconds * Micros.second)
    }

    @Test(
        "malformed or impossible dates are refused",
        arguments: [
            "", "2024-3-10", "2024-02-30", "2024-13-01", "2024-01-01T25:00", "2024-01-01T10",
            "2024-01-01T10:00+5",
        ])
    func badDates(text: String) {
        #expect(Self.newYork.parse(text) == nil)
    }

    @Test("the chart scales bars to the largest value, marks empty buckets and fits 80 columns")
    func chart() {
        let day = Micros.day
        let result = CollectionResult(
            unit: "count",
            buckets: [
                Statistics(start: 0, end: day, figures: StatisticsFigures(sum: 10_000)),
                Statistics(start: day, end: 2 * day, figures: StatisticsFigures()),
                Statistics(start: 2 * day, end: 3 * day, figures: StatisticsFigures(sum: 2_500.5)),
            ])
        let report = CollectionReport(
            result: result, options: .cumulativeSum, times: TimestampFormatter(timeZone: TimeZone(identifier: "UTC")!),
            format: .chart, subDay: false)
        let lines = report.chart(width: 80).split(separator: "\n").map(String.init)
        #expect(lines[0] == "sum (count), 3 buckets")
        #expect(lines.dropFirst().allSatisfy { $0.count == 80 })
        // 80 - 10 (date) - 6 (value) - 2 spaces = 62 columns of bar for the largest value.
        #expect(lines[1] == "1970-01-01 " + String(repeating: "█", count: 62) + "  10000")
        #expect(lines[2] == "1970-01-02 " + String(repeating: " ", count: 62) + "      -")
        // 2500.5 / 10000 × 62 columns = 15.5 columns: 15 full blocks and a half block.
        #expect(lines[3].hasPrefix("1970-01-03 " + String(repeating: "█", count: 15) + "▌ "))
        #expect(lines[3].hasSuffix(" 2500.5"))
        #expect(CollectionReport.bar(5, of: 0, width: 10) == "" && CollectionReport.bar(-1, of: 4, width: 10) == "")
    }

    @Test("records list the requested figures, one row per source with by-source, the merged one unnamed")
    func records() {
        let figures = StatisticsFigures(sum: 7)
        let bucket = Statistics(
            start: 0, end: Micros.hour, figures: figures,
            bySource: [SourceStatistics(source: SourceInfo(name: "Watch"), figures: figures)])
        func report(_ format: OutputFormat, _ timeFormat: TimeFormat = .rfc3339) -> CollectionReport {
            CollectionReport(
                result: CollectionResult(unit: "count", buckets: [bucket]),
                options: [.cumulativeSum, .separateBySource],
                times: TimestampFormatter(timeZone: TimeZone(identifier: "Asia/Kolkata")!, timeFormat: timeFormat),
                format: format, subDay: true)
        }
        #expect(
            report(.csv).rendered()
                == "start,end,source,sum,unit\n1970-01-01T05:30:00+05:30,1970-01-01T06:30:00+05:30,,7,count\n"
                + "1970-01-01T05:30:00+05:30,1970-01-01T06:30:00+05:30,Watch,7,count\n")
        #expect(
            report(.json, .epochMilliseconds).rendered()
                == "[\n  {\"start\":0,\"end\":3600000,\"sum\":7,\"unit\":\"count\",\"sources\":[{\"source\":\"Watch\",\"sum\":7}]}\n]\n"
        )
        #expect(!report(.table).rendered().contains("(merged)"))
    }

    @Test("CSV quotes a source name that needs it, leaves an empty figure empty, and writes epoch times as integers")
    func csvCells() {
        let hour = Micros.hour
        let buckets = [
            Statistics(
                start: 0, end: hour, figures: StatisticsFigures(sum: 2.5),
                bySource: [SourceStatistics(source: SourceInfo(name: "Watch, \"left\""), figures: .init(sum: 2.5))]),
            Statistics(start: hour, end: 2 * hour, figures: StatisticsFigures()),
        ]
        func csv(_ timeFormat: TimeFormat) -> String {
            CollectionReport(
                result: CollectionResult(unit: "count", buckets: buckets),
                options: [.cumulativeSum, .separateBySource],
                times: TimestampFormatter(timeZone: TimeZone(identifier: "UTC")!, timeFormat: timeFormat),
                format: .csv, subDay: true
            ).rendered()
        }
        #expect(
            csv(.epochMilliseconds)
                == "start,end,source,sum,unit\n0,3600000,,2.5,count\n0,3600000,\"Watch, \"\"left\"\"\",2.5,count\n"
                + "3600000,7200000,,,count\n")
        #expect(csv(.rfc3339).hasSuffix("\n1970-01-01T01:00:00Z,1970-01-01T02:00:00Z,,,count\n"))
    }

    @Test("CSV written in chunks of records (hkq's output) is the same text, shared bucket edges included")
    func chunkedCSV() {
        // Seven days in New York across spring-forward, a gap before the last day, one bucket without figures.
        let starts: [Timestamp] = (0..<8).map { 1_709_960_400_000_000 + $0 * Micros.day - ($0 >= 2 ? Micros.hour : 0) }
        var buckets = zip(starts, starts.dropFirst()).map { start, end in
            Statistics(start: start, end: end, figures: StatisticsFigures(sum: Double(start % 997)))
        }
        buckets[3].figures = StatisticsFigures()
        buckets.remove(at: 5)
        let report = CollectionReport(
            result: CollectionResult(unit: "count", buckets: buckets), options: .cumulativeSum,
            times: TimestampFormatter(timeZone: TimeZone(identifier: "America/New_York")!), format: .csv,
            subDay: false)
        let whole = report.rendered()
        #expect(whole.split(separator: "\n").count == buckets.count + 1)
        #expect(whole.contains("2024-03-10T00:00:00-05:00,2024-03-11T00:00:00-04:00,"))
        for chunkRows in [1, 2, 3, 5, buckets.count, 100] {
            var chunks: [String] = []
            report.writeCSV(chunkRows: chunkRows) { chunks.append(String(decoding: $0, as: UTF8.self)) }
            #expect(chunks.joined() == whole, "chunks of \(chunkRows)")
            // A chunk per `chunkRows` records, and the last (empty when they divide evenly).
            #expect(chunks.count == buckets.count / chunkRows + 1)
        }
        let (console, out, _) = Console.capturing()
        report.print(to: console)
        #expect(out.text == whole)
    }

    @Test("labels show the time of day once any edge is off midnight, seconds once any edge is off the minute")
    func labels() {
        let day = Micros.day
        func labels(_ edges: [Timestamp]) -> [String] {
            let buckets = zip(edges, edges.dropFirst()).map {
                Statistics(start: $0, end: $1, figures: StatisticsFigures(sum: 1))
            }
            let report = CollectionReport(
                result: CollectionResult(unit: "count", buckets: buckets), options: .cumulativeSum,
                times: TimestampFormatter(timeZone: TimeZone(identifier: "UTC")!), format: .table, subDay: false)
            return buckets.map { report.label($0.start) }
        }
        #expect(labels([0, day, 2 * day]) == ["1970-01-01", "1970-01-02"])
        // Only the last edge is off midnight, then off the minute: every label says so.
        #expect(labels([0, day, 2 * day + Micros.hour]) == ["1970-01-01 00:00", "1970-01-02 00:00"])
        #expect(
            labels([0, day, 2 * day, 2 * day + 30 * Micros.second])
                == ["1970-01-01 00:00:00", "1970-01-02 00:00:00", "1970-01-03 00:00:00"])
    }

    @Test("unknown statistics options and a lone --from are usage errors")
    func usageErrors() async {
        let unknown = await runHKQ(["collection", "stepCount", "--options", "median"])
        #expect(unknown.status == 64 && unknown.err.contains("unknown statistics option 'median'"))
        let lone = await runHKQ(["collection", "stepCount", "--from", "2024-01-01", "--tz", "UTC"])
        #expect(lone.status == 64 && lone.err.contains("--from and --through go together"))
        let zone = await runHKQ(["collection", "stepCount", "--tz", "Nowhere/Special"])
        #expect(zone.status == 64 && zone.err.contains("unknown time zone"))
    }
}
