import HealthClient
import HealthModel
import HealthWire

/// `hkq changes TYPE [--anchor A] [--limit N]`: what was added and deleted since an anchor (HKAnchoredObjectQuery,
/// HEALTHKIT.md §9), in arrival order, then the anchor to pass next time.
public struct ChangesCommand: Command {
    /// A changes command.
    public init() {}

    /// `changes <type>` with the query scope, `--anchor` and `--limit`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "changes", abstract: "List samples added and deleted since an anchor, and the next anchor.",
            discussion: QueryScope.discussion + """


                Rows come in arrival order (a sample written today about last year comes after older writes). \
                Added rows carry change "added", deleted ones "deleted" with only their type and UUID. The last \
                line (the JSON field "anchor", the CSV row "anchor") is the anchor to pass with --anchor next \
                time; "more" says that more changes wait beyond --limit. JSON is one object: \
                {"added":[…],"deleted":[…],"anchor":N,"more":false}; NDJSON is a line per change as watch \
                prints it, then {"kind":"anchor","anchor":N,"more":false} (see docs/OUTPUT.md). An anchor older than the server's deletion retention fails: \
                start again from 0.
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount.")],
            options: QueryScope.specs + [
                .option(
                    "anchor", value: "n", help: "The anchor a previous call printed; 0: from the beginning (default)."),
                .option(
                    "limit", value: "n", help: "At most n added plus deleted samples; 0: the server's page (default)."),
            ], selectsFields: true, printsJSONLines: true)
    }

    /// Queries the changes and prints them with the next anchor.
    public func run(_ context: CommandContext) async throws {
        let type = try QuantityType.named(context.argument(0)!)
        let scope = try QueryScope(context)
        let anchor = try context.integer(option: "anchor") ?? 0
        let limit = try context.integer(option: "limit") ?? 0
        if anchor < 0 { throw context.usageError("invalid value '\(anchor)' for '--anchor'; expected 0 or more") }
        if limit < 0 { throw context.usageError("invalid value '\(limit)' for '--limit'; expected 0 or more") }
        let unit = try scope.unit(for: type)
        let subject = context.globals.subject
        let result = try await ServerSession.run(context) { client in
            try await client.changes(
                type.identifier, subject: subject, filter: scope.filter, since: UInt64(anchor), limit: UInt64(limit),
                unit: unit.symbol)
        }
        if context.globals.jsonLines {
            if context.globals.fields != nil {
                throw context.usageError("--fields applies to the CSV and table rows of 'changes', not to NDJSON")
            }
            let stream = ChangeStream(type: type, times: scope.times, format: .json)
            for line in try stream.lines(result) { context.print(line.text) }
            context.print(
                JSONValue.object([
                    ("kind", "anchor"), ("anchor", .integer(Int64(result.anchor))), ("more", .bool(result.hasMore)),
                ]).rendered)
            return
        }
        context.console.printBlock(
            try ChangesCommand.rendered(
                result, type: type, times: scope.times, format: context.globals.format,
                fields: context.globals.fields, commandPath: context.commandPath))
    }

    /// The page in `format`. JSON: one object `{"added":[sample…],"deleted":[{"type","uuid"}…],"anchor":N,"more":B}`
    /// (samples as `hkq samples` prints them). CSV: one row per change (`change`, then the sample columns),
    /// then a last row with change `anchor` holding `anchor` and `more`. Table: the changes, then
    /// `anchor N` (with ` (more)`). `fields` (`--fields`) selects the columns of CSV and table rows; JSON, one
    /// object, refuses it.
    static func rendered(
        _ result: ChangesResult, type: QuantityType, times: TimestampFormatter, format: OutputFormat,
        fields: FieldSelection? = nil, commandPath: [String] = []
    ) throws -> String {
        func selected(_ rows: RecordSet) throws -> RecordSet {
            guard let fields else { return rows }
            return try rows.selecting(fields, commandPath: commandPath)
        }
        let added = SamplesCommand.records(try result.added.samples(), times: times, format: format)
        let deleted = deletedRecords(result, type: type)
        switch format {
        case .json:
            if fields != nil {
                throw UsageError(
                    "'changes --format json' prints one object, not a list; --fields applies to its CSV and table rows",
                    commandPath: commandPath)
            }
            return JSONValue.object([
                ("added", .array(added.rows.indices.map { added.jsonObject(row: $0) })),
                ("deleted", .array(deleted.rows.indices.map { deleted.jsonObject(row: $0) })),
                ("anchor", .integer(Int64(result.anchor))), ("more", .bool(result.hasMore)),
            ]).rendered + "\n"
        case .csv, .table, .chart:
            var rows = RecordSet(
                columns: [.init("change", title: "CHANGE")]
                    + added.columns.map { column in
                        // Tables show every change's UUID (a deletion has nothing else), not the one type queried.
                        var column = column
                        column.inTable = column.key != "type"
                        return column
                    })
            let width = added.columns.count
            for row in added.rows { rows.append([.string("added")] + row) }
            let uuid = added.columns.firstIndex { $0.key == "uuid" }!
            for row in deleted.rows {
                var cells = [JSONValue](repeating: .null, count: width)
                cells[0] = row[0]
                cells[uuid] = row[1]
                rows.append([.string("deleted")] + cells)
            }
            if format != .csv {
                return try selected(rows).renderedTable()
                    + "anchor \(result.anchor)\(result.hasMore ? " (more)" : "")\n"
            }
            rows.columns += [.init("anchor"), .init("more")]
            rows.rows = rows.rows.map { $0 + [.null, .null] }
            rows.append(
                [.string("anchor")] + [JSONValue](repeating: .null, count: width)
                    + [.integer(Int64(result.anchor)), .bool(result.hasMore)])
            return try selected(rows).renderedCSV()
        }
    }

    /// One record per deleted sample: type and uuid.
    static func deletedRecords(_ result: ChangesResult, type: QuantityType) -> RecordSet {
        RecordSet(
            columns: [.init("type", title: "TYPE"), .init("uuid", title: "UUID")],
            rows: result.deleted.map { [.string(type.identifier), .string($0.uuid.uuidString)] })
    }
}
