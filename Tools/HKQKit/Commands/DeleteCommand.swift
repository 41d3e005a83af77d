import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkq delete TYPE`: deletes the subject's samples of a type by UUID, or by time range and sources.
public struct DeleteCommand: Command {
    /// A delete command.
    public init() {}

    /// `delete <type> [--uuid U]... [--from T] [--to T] [--source S]... [--all]`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "delete", abstract: "Delete samples of one type by UUID, or by time range and source.",
            discussion: """
                Dates take the forms of 'hkq samples' (ISO 8601, a date, today, now-7d …, read in --tz). A range \
                matches samples that start at or after --from and before --to. Deleting a whole type needs --all. \
                Prints how many samples were deleted; deletions are durable and survive restarts.
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount.")],
            options: [
                .option("uuid", value: "uuid", help: "Delete the sample with this UUID (repeatable)."),
                .option("from", value: "date", help: "Delete samples starting at or after this date."),
                .option("to", value: "date", help: "Delete samples starting before this date."),
                .option("tz", value: "zone", help: "IANA time zone for dates (default: the local zone)."),
                .option("source", value: "source", help: "Only samples of this source name or bundle id (repeatable)."),
                .flag("all", help: "Allow deleting every sample of the type for the subject."),
            ])
    }

    /// Sends the delete and prints `deleted N samples` (JSON: `{"deleted":N}`).
    public func run(_ context: CommandContext) async throws {
        let type = context.argument(0)!
        let selection = try DeleteCommand.selection(context)
        let subject = context.globals.subject
        let deleted = try await ServerSession.run(context) { client in
            try await client.delete(type, subject: subject, selection)
        }
        switch context.globals.format {
        case .json: context.print(JSONValue.object([("deleted", .integer(Int64(deleted)))]).rendered)
        case .table, .csv, .chart: context.print("deleted \(HumanFormat.count(deleted, "sample"))")
        }
    }

    /// The selection the options describe; a usage error when they are contradictory or select everything
    /// without `--all`.
    static func selection(_ context: CommandContext) throws -> DeleteSelection {
        let arguments = context.arguments
        let uuidTexts = arguments.values("uuid")
        let hasFilter =
            arguments.value("from") != nil || arguments.value("to") != nil || !arguments.values("source").isEmpty
        if !uuidTexts.isEmpty {
            if hasFilter || arguments.flag("all") {
                throw context.usageError("--uuid cannot be combined with --from, --to, --source or --all")
            }
            return .uuids(
                try uuidTexts.map { text in
                    guard let uuid = UUID(uuidString: text) else { throw context.usageError("invalid UUID '\(text)'") }
                    return uuid
                })
        }
        if !hasFilter, !arguments.flag("all") {
            throw context.usageError(
                "give --uuid, --from, --to or --source, or --all to delete every sample of the type")
        }
        var filter = SampleFilter(date: DatePredicate(strictStartDate: true))
        let dates = DateArgumentParser(timeZone: try QueryScope.timeZone(context), now: context.program.clock())
        func date(_ option: String) throws -> Timestamp? {
            guard let text = arguments.value(option) else { return nil }
            guard let instant = dates.parse(text) else {
                throw context.usageError(
                    "invalid date '\(text)' for '--\(option)'; expected \(DateArgumentParser.expected)")
            }
            return instant
        }
        filter.date.start = try date("from")
        filter.date.end = try date("to")
        let sources = arguments.values("source")
        if !sources.isEmpty { filter.sources = Set(sources) }
        return .filter(filter)
    }
}
