import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkq delete TYPE`: deletes the subject's samples of a type by UUID, or by time range and sources.
public struct DeleteCommand: Command {
    /// A delete command.
    public init() {}

    /// `delete <type> [--uuid U]... [--start T] [--end T] [--source S]... [--all]`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "delete", abstract: "Delete samples of one type by UUID, or by time range and source.",
            discussion: """
                Times are ISO 8601 (2024-05-01T00:00:00Z) or microseconds since 1970. A range matches samples that \
                start at or after --start and before --end. Deleting a whole type needs --all. Prints how many \
                samples were deleted; deletions are durable and survive restarts.
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount.")],
            options: [
                .option("uuid", value: "uuid", help: "Delete the sample with this UUID (repeatable)."),
                .option("start", value: "time", help: "Delete samples starting at or after this time."),
                .option("end", value: "time", help: "Delete samples starting before this time."),
                .option("source", value: "source", help: "Only samples of this source name or bundle id (repeatable)."),
                .flag("all", help: "Allow deleting every sample of the type for the subject."),
            ])
    }

    /// Sends the delete and prints `deleted N samples` (JSON: `{"deleted":N}`).
    public func run(_ context: CommandContext) async throws {
        let type = context.argument(0)!
        let selection = try DeleteCommand.selection(context)
        let globals = context.globals
        let client = HealthClient(
            ClientConfiguration(
                host: globals.server.host, port: Int(globals.server.port), token: globals.token ?? "",
                clientName: "hkq"))
        defer { client.close() }
        let deleted: UInt64
        do {
            deleted = try await client.delete(type, subject: globals.subject, selection)
        } catch {
            throw HealthError(error.code, error.message)
        }
        switch globals.format {
        case .json: context.print(JSONValue.object([("deleted", .number(Double(deleted)))]).rendered)
        case .table, .csv: context.print("deleted \(deleted) sample\(deleted == 1 ? "" : "s")")
        }
    }

    /// The selection the options describe; a usage error when they are contradictory or select everything
    /// without `--all`.
    static func selection(_ context: CommandContext) throws -> DeleteSelection {
        let arguments = context.arguments
        let uuidTexts = arguments.values("uuid")
        let hasFilter =
            arguments.value("start") != nil || arguments.value("end") != nil || !arguments.values("source").isEmpty
        if !uuidTexts.isEmpty {
            if hasFilter || arguments.flag("all") {
                throw context.usageError("--uuid cannot be combined with --start, --end, --source or --all")
            }
            return .uuids(
                try uuidTexts.map { text in
                    guard let uuid = UUID(uuidString: text) else { throw context.usageError("invalid UUID '\(text)'") }
                    return uuid
                })
        }
        if !hasFilter, !arguments.flag("all") {
            throw context.usageError(
                "give --uuid, --start, --end or --source, or --all to delete every sample of the type")
        }
        var filter = SampleFilter(date: DatePredicate(strictStartDate: true))
        filter.date.start = try arguments.value("start").map { try time($0, option: "start", context) }
        filter.date.end = try arguments.value("end").map { try time($0, option: "end", context) }
        let sources = arguments.values("source")
        if !sources.isEmpty { filter.sources = Set(sources) }
        return .filter(filter)
    }

    /// ISO 8601 with or without fractional seconds, or whole microseconds since 1970.
    static func time(_ text: String, option: String, _ context: CommandContext) throws -> Timestamp {
        if let micros = Int64(text) { return micros }
        for options in [
            ISO8601DateFormatter.Options.withInternetDateTime, [.withInternetDateTime, .withFractionalSeconds],
        ] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) {
                return Timestamp((date.timeIntervalSince1970 * 1_000_000).rounded())
            }
        }
        throw context.usageError("invalid time '\(text)' for '--\(option)'; expected ISO 8601 or microseconds")
    }
}
