import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkq collection TYPE`: statistics per calendar bucket (HKStatisticsCollectionQuery, HEALTHKIT.md §7) as a
/// table, JSON, CSV or a bar chart.
public struct CollectionCommand: Command {
    /// A collection command.
    public init() {}

    /// `collection <type> [--options …] [--interval …] [--anchor …] [--tz …] [--from …] [--through …] [--unit …]`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "collection", abstract: "Statistics per calendar bucket (day, hour, week, …) in a time zone.",
            discussion: """
                Sums are pro-rated to the buckets and merged across sources by priority (see 'hkq sources').
                Dates are YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], local to --tz unless they end in Z or ±HH:MM.
                JSON and CSV write each bucket's start and end as an RFC 3339 instant with --tz's offset (or \
                --time-format epoch-ms|epoch-us); tables label buckets in local time, with the offset where a \
                wall time repeats (the hour after a fall-back) and the time of day when the anchor is not midnight.
                --format chart draws one bar chart per figure in --options (not the instants of recent), its \
                lines fitted to $COLUMNS, else the terminal's width, else 80 columns.
                With --from and --through every bucket from the one holding --from through the one holding \
                --through is listed, empty ones included (--to, the same, is deprecated: elsewhere --to excludes \
                what it names).
                --source, --uuid, --min, --max, --strict-start and --strict-end choose the samples as in \
                'hkq samples': --min and --max are in --unit unless they name a unit; \
                --strict-start keeps only samples that start at or after --from and --strict-end only those that \
                end before --through (HealthKit's strict date options); without them the buckets take every sample \
                overlapping them.
                Example: hkq collection stepCount --interval 1d --tz Europe/Berlin --from 2024-01-01 --through 2024-01-31 --format chart
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount.")],
            options: [
                .option(
                    "options", value: "list",
                    help: "Comma-separated: sum, average, min, max, recent, duration, by-source, by-value (or "
                        + "HealthKit's names; default: sum for cumulative types, duration,by-value for category "
                        + "types, average otherwise)."),
                .option(
                    "interval", value: "interval", help: "Bucket length: 15m, 1h, 1d, 1w, 1mo, 1y, … (default: 1d)."),
                .option(
                    "anchor", value: "date",
                    help: "Fixes the buckets' phase (default: 2000-01-01 local midnight; a Monday for weeks)."),
                .option("tz", value: "zone", help: "IANA time zone of the buckets (default: this machine's)."),
                .option(
                    "from", value: "date", help: "List every bucket from the one holding this date (with --through)."),
                RangeEnd.throughSpec("… through the one holding this date (with --from)."),
                .option("to", value: "date", help: "Deprecated: as --through (--to elsewhere excludes what it names)."),
                .option("unit", value: "unit", help: "Unit of the figures (default: the type's canonical unit)."),
            ] + QueryScope.predicateSpecs, drawsChart: true, selectsFields: true, printsJSONLines: true)
    }

    /// Queries the server and prints the buckets in the chosen format.
    public func run(_ context: CommandContext) async throws {
        let plan = try Self.plan(context)
        let result = try await ServerSession.run(context) { client in try await client.collection(plan.query) }
        var report = plan.report(result)
        report.chartWidth = context.chartWidth
        try report.print(to: context.console, fields: context.globals.fields, commandPath: context.commandPath)
    }

    /// The query a command line asks for and how its buckets print: a usage error names what is wrong with it.
    static func plan(_ context: CommandContext) throws -> CollectionPlan {
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
        let end = try RangeEnd.parse(context, deprecatedInclusiveTo: "bucket")
        let to = try end.map { try date($0.option)! }
        if (from == nil) != (to == nil) { throw context.usageError("--from and --through go together") }
        let strictStart = context.arguments.flag("strict-start")
        let strictEnd = context.arguments.flag("strict-end")
        if (strictStart || strictEnd) && from == nil {
            throw context.usageError("--strict-start and --strict-end need --from and --through")
        }
        // The bounds filter only with a strict option: the buckets listed already end at --from and --through.
        let unit = try context.arguments.value("unit").map(type.unit(parsing:)) ?? type.canonicalUnit
        let filter = try QueryScope.filter(
            QueryScope.filter(context, from: strictStart ? from : nil, to: strictEnd ? to : nil, timeZone: zone)
                .inQueryUnit(unit), values: context, for: type)

        let query = CollectionQuery(
            subject: context.globals.subject, type: type.identifier, filter: filter, options: options, anchor: anchor,
            interval: interval, timeZone: zone.identifier, unit: context.arguments.value("unit") ?? "",
            enumerateFrom: from,
            enumerateTo: to)
        let plan = CollectionPlan(
            query: query, options: options, times: context.times(in: zone), format: context.globals.format,
            subDay: interval.isShorterThanADay, values: type.categoryValues, fields: context.globals.fields,
            commandPath: context.commandPath)
        if context.globals.format == .json, let fields = plan.fields {
            try plan.report(CollectionResult(unit: "", buckets: [])).check(fields, commandPath: plan.commandPath)
        }
        return plan
    }

    /// The options named in `text`, or the type's default; a usage error names an unknown one.
    static func parseOptions(_ text: String?, type: QuantityType, context: CommandContext) throws -> StatisticsOptions {
        guard let text else {
            if type.isCategory { return StatisticsOptionNames.defaults(for: type) }
            return type.style == .cumulative ? .cumulativeSum : .discreteAverage
        }
        do {
            return try StatisticsOptionNames.parse([text])
        } catch {
            throw context.usageError(
                "unknown statistics option '\(error.name)'; expected \(StatisticsOptionNames.shortNames)")
        }
    }
}

/// What a `collection` command line asks for, before anything is sent: the query, and how its buckets print.
/// hkd's HTTP API follows the same query live (collection events) and prints each bucket as `collection` does.
package struct CollectionPlan: Sendable {
    /// The query the command sends.
    package let query: CollectionQuery
    let options: StatisticsOptions
    let times: TimestampFormatter
    let format: OutputFormat
    let subDay: Bool
    let values: CategoryValueSet?
    /// `--fields`, checked against the JSON keys.
    let fields: FieldSelection?
    let commandPath: [String]

    /// The report of `result` as the command prints it.
    func report(_ result: CollectionResult) -> CollectionReport {
        CollectionReport(
            result: result, options: options, times: times, format: format, subDay: subDay, values: values)
    }

    /// The buckets of `result` as one compact JSON array, each the object `collection --format json` prints for
    /// it (its `--fields` only), in order: `[{…},{…}]`, `[]` for none.
    package func jsonArray(_ result: CollectionResult) -> String {
        var buckets = BucketJSONWriter(report(result), fields: fields)
        var json = JSONWriter(capacity: 128 * result.buckets.count + 2)
        json.beginArray()
        for bucket in result.buckets { buckets.write(bucket, to: &json) }
        json.endArray()
        return json.text
    }
}

extension HKQ {
    /// The plan of a `collection` command line (global options included, as after `hkq`), without running it;
    /// throws the ``UsageError`` or ``HealthError`` the command would fail with.
    package func collectionPlan(arguments: [String]) throws -> CollectionPlan {
        let parse = try ArgumentParser(commands: commands, globalOptions: globalOptions).parse(arguments)
        guard parse.commands.last is CollectionCommand, !parse.wantsHelp, !parse.wantsVersion else {
            throw UsageError("not a collection command line")
        }
        let globals = try GlobalOptions.resolve(
            options: parse.arguments.options, flags: parse.arguments.flags, environment: [:],
            commandPath: parse.path)
        let context = CommandContext(
            program: self, commandPath: parse.path, arguments: parse.arguments, globals: globals, environment: [:],
            console: Console.capturing().console)
        return try CollectionCommand.plan(context)
    }
}

/// The buckets of a collection result as a table, JSON, CSV and a bar chart.
///
/// JSON and CSV write every start and end as an instant (``TimestampFormatter/machineCell(_:)``); tables and
/// charts use short wall-clock labels (see ``label(_:)``).
struct CollectionReport {
    var result: CollectionResult
    var options: StatisticsOptions
    /// The query's zone and the `--time-format`.
    let times: TimestampFormatter
    /// The output format figures are laid out for.
    let format: OutputFormat
    /// Whether labels show the time of day: buckets shorter than a day, or a bucket edge that is not at local
    /// midnight (an anchor such as 03:34).
    let showsTime: Bool
    /// Whether labels show seconds (an edge off the whole minute).
    let showsSeconds: Bool
    /// A category type's enumeration: its values get a duration column each with by-value.
    let values: CategoryValueSet?
    /// The columns a chart's lines fit in (``CommandContext/chartWidth``).
    var chartWidth = 80

    /// A report of `result` for `format`; `subDay` says that the buckets are shorter than a day.
    init(
        result: CollectionResult, options: StatisticsOptions, times: TimestampFormatter, format: OutputFormat,
        subDay: Bool, values: CategoryValueSet? = nil
    ) {
        self.values = values
        self.result = result
        self.options = options
        self.times = times
        self.format = format
        // Each distinct edge looked at once (a bucket's start is the previous one's end), until one is off the minute.
        var (offMidnight, offMinute) = (false, false)
        var previousEnd: Timestamp?
        for bucket in result.buckets where !offMinute {
            for edge in [bucket.start, bucket.end] where edge != previousEnd {
                let civil = times.civil(edge)
                offMinute = offMinute || civil.second != 0 || civil.microsecond != 0
                offMidnight = offMidnight || offMinute || civil.hour != 0 || civil.minute != 0
            }
            previousEnd = bucket.end
        }
        showsTime = subDay || offMidnight
        showsSeconds = offMinute
    }

    /// The unit figures are in; empty for a category type, which has none.
    var unitText: String { values == nil ? result.unit : "" }

    /// The figures requested, in display order.
    var figureColumns: [FigureColumn] {
        FigureColumn.columns(for: options, times: times, format: format, values: values)
    }

    /// The edge of a bucket as a cell: an instant in JSON and CSV, a ``label(_:)`` in tables.
    func edge(_ instant: Timestamp) -> JSONValue {
        format == .table || format == .chart ? .string(label(instant)) : times.machineCell(instant)
    }

    /// The fields of every record: start, end, with by-source a `source` (empty on a bucket's merged record),
    /// the figures, unit.
    private func columns(figures: [FigureColumn]) -> [RecordSet.Column] {
        var columns = [RecordSet.Column("start", title: "START"), RecordSet.Column("end", title: "END")]
        if options.contains(.separateBySource) { columns.append(RecordSet.Column("source", title: "SOURCE")) }
        columns += figures.map(\.column)
        columns.append(RecordSet.Column("unit", inTable: false))
        return columns
    }

    /// Calls `body` for every record in order: each bucket's merged figures (no source), then with by-source
    /// each source's own.
    private func forEachRecord(_ body: (_ bucket: Statistics, _ source: SourceInfo?, StatisticsFigures) -> Void) {
        let bySource = options.contains(.separateBySource)
        for bucket in result.buckets {
            body(bucket, nil, bucket.figures)
            for own in bucket.bySource where bySource { body(bucket, own.source, own.figures) }
        }
    }

    /// One record per bucket (``columns(figures:)``) and with by-source one per source, edges as ``edge(_:)``
    /// gives them: what tables and `hkq watch --collection` print.
    var records: RecordSet {
        let bySource = options.contains(.separateBySource)
        let figures = figureColumns
        var records = RecordSet(columns: columns(figures: figures))
        records.rows.reserveCapacity(result.buckets.count)
        let unit = JSONValue.string(unitText)
        // A bucket's sources repeat its edges and consecutive buckets share one: each instant is formatted once.
        var edges: (start: Timestamp, startCell: JSONValue, end: Timestamp, endCell: JSONValue)?
        forEachRecord { bucket, source, values in
            if edges?.start != bucket.start || edges?.end != bucket.end {
                let start = edges.flatMap { $0.end == bucket.start ? $0.endCell : nil } ?? edge(bucket.start)
                edges = (bucket.start, start, bucket.end, edge(bucket.end))
            }
            var cells: [JSONValue] = []
            cells.reserveCapacity(records.columns.count)
            cells.append(edges!.startCell)
            cells.append(edges!.endCell)
            if bySource { cells.append(source.map { .string($0.name) } ?? .null) }
            for figure in figures { cells.append(figure.cell(values)) }
            cells.append(unit)
            records.append(cells)
        }
        return records
    }

    /// The records as CSV, written field by field (a year of hourly buckets is 8,760 lines).
    func renderedCSV() -> String {
        var text: [UInt8] = []
        writeCSV { text.append(contentsOf: $0) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The CSV text, handed to `sink` in chunks of about `chunkRows` records (the last one shorter).
    func writeCSV(chunkRows: Int = .max, _ sink: (UnsafeRawBufferPointer) -> Void) {
        let figures = figureColumns
        var csv = CSVWriter(capacity: 80 * (min(result.buckets.count, chunkRows) + 1))
        csv.line(columns(figures: figures).lazy.map(\.key))
        let bySource = options.contains(.separateBySource)
        // Consecutive buckets share an edge: formatted once, its bytes copied (within a chunk).
        var previousEnd: (instant: Timestamp, bytes: Range<Int>)?
        var rows = 0
        forEachRecord { bucket, source, values in
            if let previousEnd, previousEnd.instant == bucket.start {
                csv.repeatField(previousEnd.bytes)
            } else {
                times.writeMachineField(bucket.start, to: &csv)
            }
            previousEnd = (bucket.end, times.writeMachineField(bucket.end, to: &csv))
            if bySource { csv.field(source?.name ?? "") }
            for figure in figures { csv.field(figure.cell(values)) }
            csv.field(unitText)
            csv.endLine()
            rows += 1
            if rows == chunkRows {
                csv.flush(sink)
                previousEnd = nil
                rows = 0
            }
        }
        csv.flush(sink)
    }

    /// Writes the report to `console`'s output: CSV and JSON in chunks of 512 records (buckets) straight from
    /// their bytes, the other formats as ``rendered()`` makes them.
    func print(to console: Console) {
        switch format {
        case .csv: writeCSV(chunkRows: 512) { console.out.write(bytes: $0) }
        case .json: writeJSON(chunkBuckets: 512) { console.out.write(bytes: $0) }
        case .table, .chart: console.printBlock(rendered())
        }
    }

    /// Writes the report as ``print(to:)`` does, with only the fields `fields` names when given.
    func print(to console: Console, fields: FieldSelection?, commandPath: [String]) throws {
        guard let fields else { return print(to: console) }
        guard format == .json else { return console.printBlock(try rendered(fields: fields, commandPath: commandPath)) }
        try check(fields, commandPath: commandPath)
        writeJSON(fields: fields, chunkBuckets: 512) { console.out.write(bytes: $0) }
    }

    /// The report with only the fields `fields` names, in its order: for JSON the keys of each bucket (`sources`
    /// with by-source, `source` in CSV and tables), otherwise the columns of ``records``.
    func rendered(fields: FieldSelection, commandPath: [String]) throws -> String {
        guard format == .json else {
            return try records.selecting(fields, commandPath: commandPath).rendered(as: format)
        }
        try check(fields, commandPath: commandPath)
        return renderedJSON(fields: fields)
    }

    /// Checks that `fields` names only keys of a bucket's JSON object (a usage error names another).
    func check(_ fields: FieldSelection, commandPath: [String]) throws {
        try fields.check(known: jsonMembers().map(\.key), commandPath: commandPath)
    }

    /// A member of a bucket's JSON object: its key and what its value is.
    struct JSONMember {
        enum Value {
            case start, end
            /// The figure of ``figureColumns`` at this index.
            case figure(Int)
            case unit
            /// With by-source: an array of `{"source", figures…}`, one per source.
            case sources
        }

        let key: String
        let value: Value
    }

    /// The members of a bucket's JSON object, in order: start, end, the figures, unit, and with by-source
    /// `sources`. The one declaration of that object (docs/OUTPUT.md, *collection*); ``BucketJSONWriter`` writes
    /// it.
    func jsonMembers() -> [JSONMember] {
        var members = [JSONMember(key: "start", value: .start), JSONMember(key: "end", value: .end)]
        for (index, figure) in figureColumns.enumerated() {
            members.append(JSONMember(key: figure.column.key, value: .figure(index)))
        }
        members.append(JSONMember(key: "unit", value: .unit))
        if options.contains(.separateBySource) { members.append(JSONMember(key: "sources", value: .sources)) }
        return members
    }

    /// The JSON text (docs/OUTPUT.md): `[`, then one bucket object a line, indented by two spaces and followed by
    /// a comma but the last, then `]`; `[]` without buckets. Only the keys `fields` names (checked before) when
    /// given. Handed to `sink` in chunks of about `chunkBuckets` buckets (the last one shorter).
    func writeJSON(
        fields: FieldSelection? = nil, chunkBuckets: Int = .max, _ sink: (UnsafeRawBufferPointer) -> Void
    ) {
        var json = JSONWriter(capacity: 128 * min(result.buckets.count, chunkBuckets) + 8)
        guard !result.buckets.isEmpty else {
            json.raw("[]\n")
            return json.flush(sink)
        }
        var buckets = BucketJSONWriter(self, fields: fields)
        json.raw("[\n  ")
        for (index, bucket) in result.buckets.enumerated() {
            if index > 0 { json.raw(",\n  ") }
            buckets.write(bucket, to: &json)
            if (index + 1) % chunkBuckets == 0 {
                json.flush(sink)
                buckets.flushed()
            }
        }
        json.raw("\n]\n")
        json.flush(sink)
    }

    /// ``writeJSON(fields:chunkBuckets:_:)``'s text as one string.
    func renderedJSON(fields: FieldSelection? = nil) -> String {
        var text: [UInt8] = []
        writeJSON(fields: fields) { text.append(contentsOf: $0) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The report in ``format``: a JSON array of bucket objects (one per line), CSV, a table or a chart.
    func rendered() -> String {
        switch format {
        case .chart: return chart(width: chartWidth)
        case .table: return records.renderedTable()
        case .csv: return renderedCSV()
        case .json: return renderedJSON()
        }
    }

    /// `2024-03-10` for day and longer buckets at midnight, `2024-03-10 14:00` otherwise, in the query's zone;
    /// a wall time the zone's clocks show twice (a fall-back hour) carries its offset, `2026-11-01 01:00 -04:00`.
    func label(_ instant: Timestamp) -> String {
        let civil = times.civil(instant)
        let pad = TimestampFormatter.pad
        var text = pad(civil.year, 4) + "-" + pad(civil.month, 2) + "-" + pad(civil.day, 2)
        guard showsTime else { return text }
        text += " " + pad(civil.hour, 2) + ":" + pad(civil.minute, 2)
        if showsSeconds { text += ":" + pad(civil.second, 2) }
        if times.isRepeatedWallTime(instant) { text += " " + times.offsetText(instant) }
        return text
    }

    /// One chart per figure requested that is a number or a duration (instants are not drawn), separated by a
    /// blank line: a heading, then one line per bucket with its start, a bar scaled to the largest value, and the
    /// value; an empty bucket has no bar and `-`. Lines are at most `width` columns (bars at least 10).
    func chart(width: Int) -> String {
        let charted = figureColumns.filter { $0.amount != nil }
        if charted.isEmpty { return "no figure to draw\n" }
        return charted.map { chart($0, width: width) }.joined(separator: "\n")
    }

    /// The chart of one figure (see ``chart(width:)``): durations print as `7h 05m`, numbers rounded.
    func chart(_ figure: FigureColumn, width: Int) -> String {
        let values = result.buckets.map { figure.amount!($0.figures) }
        let cells = result.buckets.map { figure.cell($0.figures) }
        let texts = zip(values, cells).map { value, cell in
            value == nil ? "-" : cell.isNumber ? NumberFormat.rounded(value!) : cell.plainText
        }
        let isDuration = cells.contains { !$0.isNumber && $0 != .null }
        let labels = result.buckets.map { label($0.start) }
        let labelWidth = labels.map(\.count).max() ?? 0
        let valueWidth = texts.map(\.count).max() ?? 1
        let barWidth = max(10, width - labelWidth - valueWidth - 2)
        let largest = values.compactMap { $0 }.max() ?? 0
        let unit = isDuration || result.unit.isEmpty ? "" : " (\(result.unit))"
        var lines = ["\(figure.column.key)\(unit), \(HumanFormat.count(result.buckets.count, "bucket"))"]
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

extension CalendarInterval {
    /// Whether buckets of this length are shorter than a calendar day (labels then show the time of day).
    var isShorterThanADay: Bool { unit.rawValue < CalendarInterval.Unit.day.rawValue }
}
