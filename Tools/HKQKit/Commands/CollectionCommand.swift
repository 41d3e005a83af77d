import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkq collection TYPE`: statistics per calendar bucket (HKStatisticsCollectionQuery, HEALTHKIT.md §7) as a
/// table, JSON, CSV or a bar chart.
public struct CollectionCommand: Command {
    /// A collection command.
    public init() {}

    /// `collection <type> [--options …] [--interval …] [--anchor …] [--tz …] [--from …] [--to …] [--unit …]`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "collection", abstract: "Statistics per calendar bucket (day, hour, week, …) in a time zone.",
            discussion: """
                Sums are pro-rated to the buckets and merged across sources by priority (see 'hkq sources').
                Dates are YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], local to --tz unless they end in Z or ±HH:MM.
                With --from and --to every bucket between them is listed, empty ones included.
                Example: hkq collection stepCount --interval 1d --tz Europe/Berlin --from 2024-01-01 --to 2024-01-31 --format chart
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount.")],
            options: [
                .option(
                    "options", value: "list",
                    help: "Comma-separated: sum, average, min, max, recent, duration, by-source (or HealthKit's "
                        + "names; default: sum for cumulative types, average otherwise)."),
                .option(
                    "interval", value: "interval", help: "Bucket length: 15m, 1h, 1d, 1w, 1mo, 1y, … (default: 1d)."),
                .option(
                    "anchor", value: "date",
                    help: "Fixes the buckets' phase (default: 2000-01-01 local midnight; a Monday for weeks)."),
                .option("tz", value: "zone", help: "IANA time zone of the buckets (default: this machine's)."),
                .option("from", value: "date", help: "List every bucket from the one holding this date (with --to)."),
                .option("to", value: "date", help: "… to the one holding this date (with --from)."),
                .option("unit", value: "unit", help: "Unit of the figures (default: the type's canonical unit)."),
            ])
    }

    /// Queries the server and prints the buckets in the chosen format.
    public func run(_ context: CommandContext) async throws {
        let typeName = context.argument(0)!
        let type = try QuantityType.named(typeName)
        let zone = try QueryScope.timeZone(context)
        let interval: CalendarInterval
        do {
            interval = try CalendarInterval(parsing: context.arguments.value("interval") ?? "1d")
        } catch let error as HealthError {
            throw context.usageError(error.message)
        }
        let options = try Self.parseOptions(context.arguments.value("options"), type: type, context: context)
        let dates = DateArgumentParser(timeZone: zone, now: context.program.clock())
        func date(_ name: String) throws -> Timestamp? {
            guard let text = context.arguments.value(name) else { return nil }
            guard let value = dates.parse(text) else {
                throw context.usageError(
                    "invalid date '\(text)' for '--\(name)'; expected \(DateArgumentParser.expected)")
            }
            return value
        }
        let defaultAnchor = interval.unit == .week ? "2000-01-03" : "2000-01-01"
        let anchor = try date("anchor") ?? dates.parse(defaultAnchor)!
        let from = try date("from")
        let to = try date("to")
        if (from == nil) != (to == nil) { throw context.usageError("--from and --to go together") }

        let query = CollectionQuery(
            subject: context.globals.subject, type: type.identifier, options: options, anchor: anchor,
            interval: interval, timeZone: zone.identifier, unit: context.arguments.value("unit") ?? "",
            enumerateFrom: from,
            enumerateTo: to)
        let result = try await ServerSession.run(context) { client in try await client.collection(query) }
        let report = CollectionReport(
            result: result, options: options, zone: zone,
            showsTime: interval.unit.rawValue < CalendarInterval.Unit.day.rawValue)
        if context.globals.format == .chart {
            context.console.printBlock(report.chart(width: 80))
        } else {
            context.print(report.records)
        }
    }

    /// The options named in `text`, or the type's default; a usage error names an unknown one.
    static func parseOptions(_ text: String?, type: QuantityType, context: CommandContext) throws -> StatisticsOptions {
        guard let text else { return type.style == .cumulative ? .cumulativeSum : .discreteAverage }
        do {
            return try StatisticsOptionNames.parse([text])
        } catch {
            throw context.usageError(
                "unknown statistics option '\(error.name)'; expected \(StatisticsOptionNames.shortNames)")
        }
    }
}

/// The buckets of a collection result as records and as a bar chart.
struct CollectionReport {
    var result: CollectionResult
    var options: StatisticsOptions
    let zone: TimeZone
    /// Whether labels show the time of day (buckets shorter than a day).
    var showsTime: Bool
    /// Labels' offsets, learnt once per zone transition.
    private let times: TimestampFormatter

    init(result: CollectionResult, options: StatisticsOptions, zone: TimeZone, showsTime: Bool) {
        self.result = result
        self.options = options
        self.zone = zone
        self.showsTime = showsTime
        times = TimestampFormatter(timeZone: zone)
    }

    /// The figures requested, in display order: key and how to read it.
    private var figureColumns: [(key: String, value: (StatisticsFigures) -> Double?)] {
        var columns: [(key: String, value: (StatisticsFigures) -> Double?)] = []
        if options.contains(.cumulativeSum) { columns.append(("sum", { $0.sum })) }
        if options.contains(.discreteAverage) { columns.append(("average", { $0.average })) }
        if options.contains(.discreteMin) { columns.append(("min", { $0.minimum })) }
        if options.contains(.discreteMax) { columns.append(("max", { $0.maximum })) }
        if options.contains(.mostRecent) { columns.append(("mostRecent", { $0.mostRecent?.value })) }
        if options.contains(.duration) { columns.append(("durationSeconds", { $0.duration.map { Double($0) / 1e6 } })) }
        return columns
    }

    /// One record per bucket (start, end, figures); with by-source, one more per source after it.
    var records: RecordSet {
        let bySource = options.contains(.separateBySource)
        var columns = [RecordSet.Column("start"), RecordSet.Column("end")]
        if bySource { columns.append(RecordSet.Column("source")) }
        columns += figureColumns.map { RecordSet.Column($0.key) }
        columns.append(RecordSet.Column("unit", inTable: false))
        var records = RecordSet(columns: columns)
        func row(_ bucket: Statistics, source: String?, _ figures: StatisticsFigures) -> [JSONValue] {
            var cells: [JSONValue] = [.string(label(bucket.start)), .string(label(bucket.end))]
            if let source { cells.append(.string(source)) }
            cells += figureColumns.map { column in column.value(figures).map(JSONValue.number) ?? .null }
            cells.append(.string(result.unit))
            return cells
        }
        for bucket in result.buckets {
            records.append(row(bucket, source: bySource ? "(merged)" : nil, bucket.figures))
            for own in bucket.bySource where bySource {
                records.append(row(bucket, source: own.source.name, own.figures))
            }
        }
        return records
    }

    /// `2024-03-10` for day and longer buckets, `2024-03-10 14:00` for shorter ones, in the query's zone.
    func label(_ instant: Timestamp) -> String {
        let civil = CivilTime(
            timestamp: instant, offsetSeconds: times.offsetSeconds(at: instant))
        let pad = TimestampFormatter.pad
        let day = pad(civil.year, 4) + "-" + pad(civil.month, 2) + "-" + pad(civil.day, 2)
        return showsTime ? day + " " + pad(civil.hour, 2) + ":" + pad(civil.minute, 2) : day
    }

    /// One line per bucket: its start, a bar scaled to the largest value, and the value (the first figure
    /// requested); an empty bucket has no bar and `-`. Lines are at most `width` columns.
    func chart(width: Int) -> String {
        guard let column = figureColumns.first else { return "no figure to draw\n" }
        let values = result.buckets.map { column.value($0.figures) }
        let texts = values.map { $0.map(NumberFormat.display) ?? "-" }
        let labels = result.buckets.map { label($0.start) }
        let labelWidth = labels.map(\.count).max() ?? 0
        let valueWidth = texts.map(\.count).max() ?? 1
        let barWidth = max(10, width - labelWidth - valueWidth - 2)
        let largest = values.compactMap { $0 }.max() ?? 0
        var lines = ["\(column.key) (\(result.unit)), \(result.buckets.count) buckets"]
        for (index, value) in values.enumerated() {
            let bar = Self.bar(value ?? 0, of: largest, width: barWidth)
            let padded = bar + String(repeating: " ", count: barWidth - bar.count)
            let label = labels[index].padding(toLength: labelWidth, withPad: " ", startingAt: 0)
            let value = String(repeating: " ", count: valueWidth - texts[index].count) + texts[index]
            lines.append("\(label) \(padded) \(value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A bar of `width` columns at most, in eighths of a column, for `value` out of `largest` (negatives: none).
    static func bar(_ value: Double, of largest: Double, width: Int) -> String {
        guard largest > 0, value > 0 else { return "" }
        let eighths = Int((min(value / largest, 1) * Double(width * 8)).rounded())
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return String(repeating: "█", count: eighths / 8) + partial[eighths % 8]
    }
}
