import Foundation
import HealthModel
import HealthWire
import Testing

@testable import HKQKit

/// `hkq collection --format json` written straight into bytes (``JSONWriter``) is the text the `JSONValue` trees
/// rendered by string appends gave before it (``PreviousCollectionJSON``), byte for byte, for collections of every
/// shape: day, hour and week buckets across DST changes, gaps, missing figures, every option, by-source with names
/// that need escaping, `--fields`, epoch times, and none.
@Suite struct CollectionJSONTests {
    static let newYork = TimeZone(identifier: "America/New_York")!

    /// Names that need each kind of escaping, and some that need none.
    static let sourceNames = [
        "Watch", "Ana's \"new\" iPhone", #"C:\Health\export"#, "line\nbreak\ttab\rreturn", "bell\u{07}unit\u{1F}",
        "nul\u{00}byte", "delete\u{7F}", "Åsa’s Ring ⌚️", "e\u{301}\"\u{301}", "😀\\😀", "", " padded ",
    ]

    /// Buckets of `interval` from `from` in `zone`, as the engine cuts them (local calendar edges, DST days 23 or
    /// 25 hours), every fifth left out (a gap) and every seventh without figures; figures drawn from `seed`.
    static func buckets(
        _ interval: CalendarInterval, from: Timestamp, count: Int, zone: TimeZone, options: StatisticsOptions,
        values: CategoryValueSet? = nil, seed: UInt64
    ) -> [Statistics] {
        var random = SplitMix64(seed: seed)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let component: Calendar.Component =
            switch interval.unit {
            case .second: .second
            case .minute: .minute
            case .hour: .hour
            case .day: .day
            case .week: .weekOfYear
            default: .month
            }
        func edge(_ index: Int) -> Timestamp {
            let date = calendar.date(
                byAdding: component, value: index * interval.count, to: Date(timeIntervalSince1970: Double(from) / 1e6))!
            return Timestamp(date.timeIntervalSince1970 * 1e6)
        }
        func number() -> Double? {
            switch random.next() % 8 {
            case 0: nil
            case 1: Double(random.next() % 20_000)
            case 2: Double(random.next() % 1_000_000) / 7
            case 3: -Double(random.next() % 1_000) / 3
            case 4: [1e-06, 0.1 + 0.2, 9_007_199_254_740_994, 1e21, -0.0, 1.5e300][Int(random.next() % 6)]
            default: Double(random.next() % 100_000) / 100
            }
        }
        func figures(start: Timestamp, end: Timestamp) -> StatisticsFigures {
            var figures = StatisticsFigures()
            if options.contains(.cumulativeSum) { figures.sum = number() }
            if options.contains(.discreteAverage) { figures.average = number() }
            if options.contains(.discreteMin) { figures.minimum = number() }
            if options.contains(.discreteMax) { figures.maximum = number() }
            if options.contains(.mostRecent), random.next() % 4 != 0 {
                // Off the second now and then: a fraction in the instant.
                let at = start + Timestamp(random.next() % UInt64(end - start)) / 250 * 250
                figures.mostRecent = MostRecent(value: number() ?? 1, start: at, end: min(end, at + Micros.minute))
            }
            if options.contains(.duration) { figures.duration = Int64(random.next() % 90_000_000_000) }
            if options.contains(.separateByValue), let values {
                figures.durationByValue = values.values.filter { _ in random.next() % 2 == 0 }.map {
                    ValueDuration(value: $0.rawValue, duration: Int64(random.next() % 30_000_000_000))
                }
            }
            return figures
        }
        return (0..<count).compactMap { index in
            guard index % 5 != 4 else { return nil }
            let start = edge(index)
            let end = edge(index + 1)
            let bySource =
                options.contains(.separateBySource)
                ? (0..<Int(random.next() % 4)).map { _ in
                    SourceStatistics(
                        source: SourceInfo(name: sourceNames[Int(random.next() % UInt64(sourceNames.count))]),
                        figures: figures(start: start, end: end))
                } : []
            let merged = index % 7 == 6 ? StatisticsFigures() : figures(start: start, end: end)
            return Statistics(start: start, end: end, figures: merged, bySource: bySource)
        }
    }

    /// One collection to print, and the `--fields` selections to try on it.
    struct Case: CustomStringConvertible {
        var description: String
        var report: CollectionReport
        var fields: [FieldSelection]
    }

    static func cases() throws -> [Case] {
        let sleep = try QuantityType.named("sleepAnalysis")
        // 2024-03-09 (New York, before spring-forward) and 2026-10-30 (before fall-back).
        let spring: Timestamp = 1_709_960_400_000_000
        let fall: Timestamp = 1_793_332_800_000_000
        func report(
            _ interval: String, from: Timestamp, count: Int, zone: TimeZone = newYork, options: StatisticsOptions,
            timeFormat: TimeFormat = .rfc3339, values: CategoryValueSet? = nil, unit: String = "count", seed: UInt64
        ) throws -> CollectionReport {
            let interval = try CalendarInterval(parsing: interval)
            let buckets = buckets(
                interval, from: from, count: count, zone: zone, options: options, values: values, seed: seed)
            return CollectionReport(
                result: CollectionResult(unit: unit, buckets: buckets), options: options,
                times: TimestampFormatter(timeZone: zone, timeFormat: timeFormat), format: .json,
                subDay: interval.isShorterThanADay, values: values)
        }
        let all: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax, .mostRecent, .duration]
        return [
            Case(
                description: "days across spring-forward",
                report: try report("1d", from: spring, count: 40, options: .cumulativeSum, seed: 1),
                fields: [FieldSelection(["sum"]), FieldSelection(["unit", "end", "start"])]),
            Case(
                description: "hours across fall-back",
                report: try report("1h", from: fall + 2 * Micros.day, count: 30, options: .cumulativeSum, seed: 2),
                fields: [FieldSelection(["start"]), FieldSelection(["end", "sum"])]),
            Case(
                description: "weeks, every figure",
                report: try report(
                    "1w", from: spring - 3 * Micros.day, count: 60, options: all, unit: "count/min", seed: 3),
                fields: [FieldSelection(["mostRecentStart", "maximum", "duration"])]),
            Case(
                description: "15 minutes, epoch milliseconds, by source",
                report: try report(
                    "15m", from: fall + 2 * Micros.day, count: 50, options: [.cumulativeSum, .separateBySource],
                    timeFormat: .epochMilliseconds, seed: 4),
                fields: [FieldSelection(["sources"]), FieldSelection(["sources", "start", "sum"])]),
            Case(
                description: "days in Kathmandu, epoch microseconds, every figure by source",
                report: try report(
                    "1d", from: 1_700_000_000_000_000, count: 25, zone: TimeZone(identifier: "Asia/Kathmandu")!,
                    options: all.union(.separateBySource), timeFormat: .epochMicroseconds, seed: 5),
                fields: [FieldSelection(["end", "sources", "average"])]),
            Case(
                description: "months in UTC by source",
                report: try report(
                    "1mo", from: 1_704_067_200_000_000, count: 14, zone: TimeZone(identifier: "UTC")!,
                    options: [.discreteAverage, .separateBySource], unit: "ms", seed: 6),
                fields: [FieldSelection(["start", "sources"])]),
            Case(
                description: "sleep by value",
                report: try report(
                    "1d", from: spring, count: 12, options: [.duration, .separateByValue], values: sleep.categoryValues,
                    unit: "", seed: 7),
                fields: [FieldSelection(["asleepCore", "start"])]),
            Case(
                description: "no bucket",
                report: try report(
                    "1d", from: spring, count: 0, options: [.cumulativeSum, .separateBySource], seed: 8),
                fields: [FieldSelection(["sum"])]),
        ]
    }

    @Test("the report's JSON is the previous renderer's, byte for byte, whole, chunked and with --fields")
    func sameAsBefore() throws {
        for testCase in try Self.cases() {
            let report = testCase.report
            let expected = PreviousCollectionJSON.rendered(report)
            #expect(report.rendered() == expected, "\(testCase)")
            if report.result.buckets.isEmpty {
                #expect(expected == "[]\n")
            } else {
                #expect(expected.hasPrefix("[\n  {") && expected.hasSuffix("}\n]\n"), "\(testCase)")
            }
            for chunkBuckets in [1, 2, 7, 1_000] {
                var chunks: [UInt8] = []
                report.writeJSON(chunkBuckets: chunkBuckets) { chunks.append(contentsOf: $0) }
                #expect(String(decoding: chunks, as: UTF8.self) == expected, "\(testCase), chunks of \(chunkBuckets)")
            }
            let (console, out, _) = Console.capturing()
            report.print(to: console)
            #expect(out.text == expected, "\(testCase), printed")
            for fields in testCase.fields {
                let selected = PreviousCollectionJSON.rendered(report, fields: fields)
                #expect(try report.rendered(fields: fields, commandPath: []) == selected, "\(testCase), \(fields)")
                var chunks: [UInt8] = []
                report.writeJSON(fields: fields, chunkBuckets: 3) { chunks.append(contentsOf: $0) }
                #expect(String(decoding: chunks, as: UTF8.self) == selected, "\(testCase), \(fields) in chunks")
                let (console, out, _) = Console.capturing()
                try report.print(to: console, fields: fields, commandPath: [])
                #expect(out.text == selected, "\(testCase), \(fields) printed")
            }
        }
    }

    @Test("the JSON is valid and holds the source names as they were")
    func sourceNamesRoundTrip() throws {
        let report = try #require(Self.cases().first { $0.description.hasPrefix("15 minutes") }).report
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(report.rendered().utf8)) as? [[String: Any]])
        #expect(parsed.count == report.result.buckets.count)
        let written = parsed.flatMap { ($0["sources"] as? [[String: Any]] ?? []).map { $0["source"] as? String } }
        let given = report.result.buckets.flatMap { $0.bySource.map { Optional($0.source.name) } }
        #expect(written == given && given.count > 20)
    }

    @Test("a plan's compact array (the HTTP API's collection events) holds the objects of the JSON lines")
    func compactArray() throws {
        for testCase in try Self.cases() {
            for fields in [nil] + testCase.fields.map(Optional.some) {
                let report = testCase.report
                let plan = CollectionPlan(
                    query: CollectionQuery(
                        subject: "s", type: "stepCount", options: report.options, anchor: 0,
                        interval: CalendarInterval(1, .day), timeZone: "UTC"),
                    options: report.options, times: report.times, format: .json, subDay: false, values: report.values,
                    fields: fields, commandPath: [])
                let objects = PreviousCollectionJSON.objects(report, fields: fields)
                #expect(plan.jsonArray(report.result) == "[" + objects.joined(separator: ",") + "]", "\(testCase)")
            }
        }
    }

    @Test("watch's bucket lines are the bucket objects with their kind first, as before")
    func watchLines() throws {
        for testCase in try Self.cases() {
            let report = testCase.report
            var objects = BucketJSONWriter(report, fields: nil)
            for bucket in report.result.buckets {
                var json = JSONWriter()
                objects.write(bucket, to: &json, kind: "bucket")
                objects.flushed()
                var expected = ""
                PreviousCollectionJSON.render(
                    .object([("kind", "bucket")] + PreviousCollectionJSON.object(report, bucket)), into: &expected)
                #expect(json.text == expected, "\(testCase)")
            }
        }
    }

    @Test("strings are escaped on their bytes as JSONString escaped their scalars")
    func escaping() {
        #expect(
            JSONString.quoted("a\"b\\c\u{01}\n\t\r\u{1F}\u{7F}é")
                == #""a\"b\\c\u0001\n\t\r\u001f"# + "\u{7F}é\"")
        var every = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        every += Self.sourceNames + ["\u{10FFFF}", "\u{FEFF}x", "ß\u{0}\u{2028}"]
        for text in every {
            let expected = PreviousCollectionJSON.quoted(text)
            #expect(JSONString.quoted(text) == expected, "\(Array(text.unicodeScalars))")
            var bytes: [UInt8] = []
            JSONString.append(text, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == expected)
            var writer = JSONWriter()
            writer.beginArray()
            writer.string(text)
            writer.value(.string(text))
            writer.endArray()
            #expect(writer.text == "[\(expected),\(expected)]")
        }
    }

    @Test("numbers are written in their shortest form, non-finite ones as null")
    func numbers() {
        let values: [Double] = [
            0, -0.0, 1, -1, 37, 1609.344, 1e-06, 0.1 + 0.2, 9_007_199_254_740_992, 9_007_199_254_740_994, 1e21,
            -123_456.75, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .nan, .infinity, -.infinity,
        ]
        for value in values {
            var writer = JSONWriter()
            writer.number(value)
            #expect(writer.text == (value.isFinite ? NumberFormat.shortest(value) : "null"), "\(value)")
        }
        var writer = JSONWriter()
        writer.beginArray()
        for value in [Int64.min, -1, 0, 7, Int64.max] { writer.integer(value) }
        writer.endArray()
        #expect(writer.text == "[-9223372036854775808,-1,0,7,9223372036854775807]")
    }
}

/// How `collection --format json` was written before ``JSONWriter``: a `JSONValue` tree per bucket, rendered by
/// string appends with per-scalar escaping. The oracle of ``CollectionJSONTests``; not used by hkq.
enum PreviousCollectionJSON {
    static func rendered(_ report: CollectionReport, fields: FieldSelection? = nil) -> String {
        if report.result.buckets.isEmpty { return "[]\n" }
        return "[\n" + objects(report, fields: fields).map { "  " + $0 }.joined(separator: ",\n") + "\n]\n"
    }

    static func objects(_ report: CollectionReport, fields: FieldSelection?) -> [String] {
        report.result.buckets.map { bucket in
            let pairs = object(report, bucket)
            var text = ""
            render(.object(fields.map { $0.select(pairs) } ?? pairs), into: &text)
            return text
        }
    }

    static func object(_ report: CollectionReport, _ bucket: Statistics) -> [(String, JSONValue)] {
        let figures = report.figureColumns
        var pairs: [(String, JSONValue)] = [("start", report.edge(bucket.start)), ("end", report.edge(bucket.end))]
        pairs += figures.map { ($0.column.key, $0.cell(bucket.figures)) }
        pairs.append(("unit", .string(report.unitText)))
        if report.options.contains(.separateBySource) {
            let sources = bucket.bySource.map { own in
                JSONValue.object(
                    [("source", .string(own.source.name))] + figures.map { ($0.column.key, $0.cell(own.figures)) })
            }
            pairs.append(("sources", .array(sources)))
        }
        return pairs
    }

    static func render(_ value: JSONValue, into text: inout String) {
        switch value {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let value): text += value.isFinite ? NumberFormat.shortest(value) : "null"
        case .integer(let value): text += String(value)
        case .string(let value): text += quoted(value)
        case .array(let values):
            text += "["
            for (position, value) in values.enumerated() {
                if position > 0 { text += "," }
                render(value, into: &text)
            }
            text += "]"
        case .object(let pairs):
            text += "{"
            for (position, (key, value)) in pairs.enumerated() {
                if position > 0 { text += "," }
                text += quoted(key)
                text += ":"
                render(value, into: &text)
            }
            text += "}"
        }
    }

    static func quoted(_ string: String) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
