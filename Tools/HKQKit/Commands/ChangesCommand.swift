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
                Added rows carry change "added", deleted ones "deleted" with only their UUID. The last line \
                (or the JSON field "anchor") is the anchor to pass with --anchor next time; "more" says that \
                more changes wait beyond --limit. An anchor older than the server's deletion retention fails: \
                start again from 0.
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount.")],
            options: QueryScope.specs + [
                .option(
                    "anchor", value: "n", help: "The anchor a previous call printed; 0: from the beginning (default)."),
                .option(
                    "limit", value: "n", help: "At most n added plus deleted samples; 0: the server's page (default)."),
            ])
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
        context.print(try ChangesCommand.records(result, times: scope.times))
        if context.globals.format == .table {
            context.print("anchor \(result.anchor)\(result.hasMore ? " (more)" : "")")
        }
    }

    /// One record per change: change, start, end, value, unit, source, uuid; a final record holds the anchor
    /// (in JSON and CSV as a row with change "anchor").
    static func records(_ result: ChangesResult, times: TimestampFormatter) throws -> RecordSet {
        var records = RecordSet(columns: [
            .init("change", title: "CHANGE"), .init("start", title: "START"), .init("end", title: "END"),
            .init("value", title: "VALUE"), .init("unit", title: "UNIT"), .init("source", title: "SOURCE"),
            .init("uuid", title: "UUID"), .init("anchor", title: "ANCHOR", inTable: false),
            .init("more", title: "MORE", inTable: false),
        ])
        let anchor = JSONValue.number(Double(result.anchor))
        let more = JSONValue.bool(result.hasMore)
        for sample in try result.added.samples() {
            records.append([
                .string("added"), .string(times.display(sample.start)), .string(times.display(sample.end)),
                .number(sample.value), .string(sample.unit.symbol), .string(sample.source.name),
                .string(sample.uuid.uuidString), anchor, more,
            ])
        }
        for deleted in result.deleted {
            records.append([
                .string("deleted"), .null, .null, .null, .null, .null, .string(deleted.uuid.uuidString), anchor, more,
            ])
        }
        return records
    }
}
