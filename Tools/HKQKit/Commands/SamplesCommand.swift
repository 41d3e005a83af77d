import HealthClient
import HealthModel
import HealthWire

/// `hkq samples TYPE[,TYPE...]`: HealthKit's sample query, printed as rows or joined per interval.
public struct SamplesCommand: Command {
    /// A samples command.
    public init() {}

    /// `samples <types>` with the query options, `--limit`, `--sort` and `--join`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "samples", abstract: "List the samples of one or more types (HealthKit sample query).",
            discussion: QueryScope.discussion + """


                Columns: type, start, end, value, unit, source and uuid (uuid in JSON and CSV only), and in \
                JSON a metadata object on the samples stored with metadata; a category \
                type's value prints as its name (inBed, asleepCore, stood, …) and its unit is empty. Times print \
                in --tz. With several types the rows are merged in --sort order and --limit counts rows in all. \
                --join interval puts the samples of different types that share start, end and source on one \
                row, one field per type (e.g. steps and distance per interval); a second sample of a type with the \
                same interval and source goes on a second row for that interval and source. A correlation \
                type prints one row a reading: bloodPressure (bloodPressureSystolic and \
                bloodPressureDiastolic), food (the dietary types), from the stored correlations (their interval, \
                source and uuid, with the values of their members among the samples the options select); \
                member samples no stored correlation names are joined by interval and source. --workout UUID \
                keeps the samples of one workout (hkq workouts): within its interval, from its source or device.

                Paging (one type, without --join): when --limit leaves samples out, a hint on standard error \
                names the token of the next page; --after TOKEN (with the same options) lists the samples after \
                it. Following the tokens lists every sample that existed when paging began exactly once, \
                whatever is written meanwhile.
                """,
            arguments: [
                ArgumentSpec(
                    "types", help: "Types, comma-separated: stepCount,distanceWalkingRunning or sleepAnalysis.")
            ],
            options: QueryScope.specs + [
                WorkoutScope.spec,
                .option("limit", value: "n", help: "At most n rows; 0 means no limit (default: 0)."),
                .option(
                    "after", value: "token",
                    help: "The rows after the page this token ended (one type; hkq prints it when --limit cut a list)."),
                .option(
                    "sort", value: "order", help: "start, -start, end or -end; - is newest first (default: start).",
                    allowedValues: SampleOrder.allCases.map(\.rawValue)),
                .option(
                    "join", value: "how", help: "interval: one row per interval and source, a field per type.",
                    allowedValues: ["interval"]),
            ], selectsFields: true, printsJSONLines: true)
    }

    /// Queries each type, merges the results, and prints them as sample rows or joined rows.
    public func run(_ context: CommandContext) async throws {
        // A correlation (bloodPressure, food) prints one row a reading, from the stored correlations.
        let correlation = CorrelationType(named: context.argument(0)!)
        let types = try correlation?.members ?? QueryScope.types(context.argument(0)!, context: context)
        let scope = try QueryScope(context)
        if let stray = scope.unusedUnitKeys(types).first {
            throw context.usageError("--unit names '\(stray)', which is not among the types queried")
        }
        let order = context.arguments.value("sort").flatMap(SampleOrder.init(rawValue:)) ?? .start
        let limit = try context.integer(option: "limit") ?? 0
        if limit < 0 { throw context.usageError("invalid value '\(limit)' for '--limit'; expected 0 or more") }
        // Pages continue the samples of one type, listed as they come.
        let paged = correlation == nil && types.count == 1 && context.arguments.value("join") == nil
        let after = try Self.pageToken(context)
        if after != nil, !paged {
            throw context.usageError(
                "--after continues the samples of one type; give one quantity or category type, without --join")
        }
        let units = try types.map { try scope.unit(for: $0) }
        let subject = context.globals.subject
        let format = context.globals.format
        if paged, format == .json || format == .csv {
            let (type, unit) = (types[0], units[0])
            let next = try await ServerSession.run(context) { client in
                let filter = try await WorkoutScope.narrow(
                    try QueryScope.filter(scope.filter.inQueryUnit(unit), values: context, for: type), type: type,
                    context: context, client: client)
                return try await Self.printPages(times: scope.times, context: context, from: after, limit: limit) {
                    after, rows in
                    try await client.samplePage(
                        type.identifier, subject: subject, filter: filter, sort: order.sort, limit: rows,
                        after: after, unit: unit.symbol)
                }
            }
            if let next { context.console.printNextPage(next) }
            return
        }
        let (lists, correlations, next) = try await ServerSession.run(context) { client in
            var lists: [[Sample]] = []
            var next: PageToken?
            for (type, unit) in zip(types, units) {
                let filter = try QueryScope.filter(scope.filter.inQueryUnit(unit), values: context, for: type)
                let page = try await client.samplePage(
                    type.identifier, subject: subject,
                    filter: try await WorkoutScope.narrow(filter, type: type, context: context, client: client),
                    sort: order.sort, limit: limit, after: after, unit: unit.symbol)
                lists.append(page.samples)
                if paged { next = page.next }
            }
            guard let correlation else { return (lists, [Correlation](), next) }
            return (lists, try await Self.correlations(correlation, of: lists.flatMap { $0 }, subject, client), next)
        }
        let samples = order.merge(lists)
        if correlation != nil {
            var rows = CorrelationRows(
                correlations: correlations, samples: samples, types: types, units: units, times: scope.times,
                format: format, newestFirst: order == .startDescending || order == .endDescending)
            rows.truncate(to: limit)
            try context.print(rows.records)
            return
        }
        if context.arguments.value("join") != nil {
            var join = IntervalJoin(samples: samples, types: types, units: units, times: scope.times, format: format)
            join.truncate(to: limit)
            try context.print(join.records)
            return
        }
        let shown = limit > 0 ? Array(samples.prefix(limit)) : samples
        let records = SamplesCommand.records(shown, times: scope.times, format: format)
        if format == .json, shown.contains(where: { !$0.metadata.isEmpty }) {
            context.console.printBlock(
                try Self.jsonWithMetadata(records, shown.map(\.metadata), times: scope.times, context: context))
        } else {
            try context.print(records, extraFields: ["metadata"])
        }
        if let next { context.console.printNextPage(next) }
    }

    /// The `--after` token, if given; a usage error for text that is not one.
    static func pageToken(_ context: CommandContext) throws -> PageToken? {
        guard let text = context.arguments.value("after") else { return nil }
        guard let token = PageToken(text: text) else {
            throw context.usageError("invalid value '\(text)' for '--after'; expected a page token as hkq printed it")
        }
        return token
    }

    /// The stored correlations of `type` starting within a day of `members` (the member samples queried).
    static func correlations(
        _ type: CorrelationType, of members: [Sample], _ subject: String, _ client: HealthClient
    ) async throws -> [Correlation] {
        guard let first = members.map(\.start).min(), let last = members.map(\.start).max() else { return [] }
        let filter = CorrelationFilter(types: [type], start: first - Micros.day, end: last + Micros.day)
        return try await client.correlations(subject: subject, filter: filter).correlations.map(\.correlation)
    }

    /// The records as a JSON array, one object a line, each row's `metadata[row]` (when not empty) added as a
    /// `metadata` object (strings and numbers as they are, a date as `{"date": instant}`, a quantity as
    /// `{"value": number, "unit": string}`); with `--fields` (in `context`) only the keys it names, in its order.
    static func jsonWithMetadata(
        _ records: RecordSet, _ metadata: [[String: MetadataValue]], times: TimestampFormatter,
        context: CommandContext? = nil
    ) throws -> String {
        "[\n" + (try jsonObjects(records, metadata, times: times, context: context)).joined(separator: ",\n") + "\n]\n"
    }

    /// The lines of ``jsonWithMetadata(_:_:times:context:)``'s array: each record's object, indented.
    static func jsonObjects(
        _ records: RecordSet, _ metadata: [[String: MetadataValue]], times: TimestampFormatter,
        context: CommandContext? = nil
    ) throws -> [String] {
        let selection = context?.globals.fields
        if let selection, let context {
            try selection.check(known: records.columns.map(\.key) + ["metadata"], commandPath: context.commandPath)
        }
        return metadata.indices.map { row -> String in
            guard case .object(var pairs) = records.jsonObject(row: row) else { return "" }
            if !metadata[row].isEmpty { pairs.append(("metadata", metadataJSON(metadata[row], times: times))) }
            return "  " + JSONValue.object(selection?.select(pairs) ?? pairs).rendered
        }
    }

    /// Rows per page of a listing printed page by page.
    static let pageRows = 4_096

    /// Prints a listing of samples page by page, in JSON or CSV: the same text ``run(_:)`` prints for the whole
    /// listing at once (a JSON array one object a line, or a CSV header and rows), with only one page in memory.
    /// `query` asks for the page after a token (from the first sample for `nil`) of at most `rows` samples; the
    /// listing starts after `start` and ends after `limit` samples (0: none). Returns the token of the samples
    /// the limit left out, if any.
    static func printPages(
        times: TimestampFormatter, context: CommandContext, from start: PageToken?, limit: Int,
        _ query: (_ after: PageToken?, _ rows: Int) async throws -> SamplePage
    ) async throws -> PageToken? {
        let format = context.globals.format
        let out = context.console.out
        var started = false
        var after = start
        var printed = 0
        repeat {
            try Task.checkCancellation()
            let page = try await query(after, limit > 0 ? min(pageRows, limit - printed) : pageRows)
            after = page.next
            printed += page.samples.count
            guard !page.samples.isEmpty else { continue }
            let records = Self.records(page.samples, times: times, format: format)
            switch format {
            case .csv:
                var csv = try context.selected(records, extraFields: ["metadata"]).renderedCSV()
                if started { csv.removeSubrange(...csv.firstIndex(of: "\n")!) }
                out.write(csv)
            default:
                let objects = try jsonObjects(records, page.samples.map(\.metadata), times: times, context: context)
                out.write((started ? ",\n" : "[\n") + objects.joined(separator: ",\n"))
            }
            started = true
        } while after != nil && (limit == 0 || printed < limit)
        let empty = try context.selected(Self.records([], times: times, format: format), extraFields: ["metadata"])
        switch (format, started) {
        case (.csv, false): out.write(empty.renderedCSV())
        case (.csv, true): break
        case (_, false): out.write("[]\n")
        case (_, true): out.write("\n]\n")
        }
        return after
    }

    /// One metadata row as JSON: strings and numbers as they are, a date as `{"date": instant}`, a quantity as
    /// `{"value": number, "unit": string}`, keys sorted.
    static func metadataJSON(_ metadata: [String: MetadataValue], times: TimestampFormatter) -> JSONValue {
        .object(
            metadata.keys.sorted().map { key in
                switch metadata[key]! {
                case .string(let text): (key, .string(text))
                case .number(let number): (key, .number(number))
                case .date(let date): (key, .object([("date", times.machineCell(date))]))
                case .quantity(let number, let unit):
                    (key, .object([("value", .number(number)), ("unit", .string(unit))]))
                }
            })
    }

    /// One record per sample: type, start, end, value, unit, source, uuid (uuid not in tables). A category
    /// sample's value is its value's name (`asleepCore`) and its unit is empty.
    public static func records(_ samples: [Sample], times: TimestampFormatter, format: OutputFormat) -> RecordSet {
        var records = RecordSet(columns: [
            .init("type", title: "TYPE"), .init("start", title: "START"), .init("end", title: "END"),
            .init("value", title: "VALUE"), .init("unit", title: "UNIT"), .init("source", title: "SOURCE"),
            .init("uuid", title: "UUID", inTable: false),
        ])
        records.rows.reserveCapacity(samples.count)
        for sample in samples {
            records.append([
                .string(sample.type.identifier), times.cell(sample.start, format: format),
                times.cell(sample.end, format: format), valueCell(sample),
                .string(sample.type.isCategory ? "" : sample.unit.symbol),
                .string(sample.source.name), .string(sample.uuid.uuidString),
            ])
        }
        return records
    }

    /// A quantity sample's number, or a category sample's value name (its raw value when the enumeration lacks it).
    static func valueCell(_ sample: Sample) -> JSONValue {
        guard let values = sample.type.categoryValues, let raw = Int(exactly: sample.value) else {
            return .number(sample.value)
        }
        return .string(values.name(of: raw))
    }
}
