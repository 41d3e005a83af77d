import Foundation
import HealthClient
import HealthModel

/// `hkq sources TYPE [--priority A,B,C]`: the sources of a type for the subject, highest priority first, and
/// setting that order (HEALTHKIT.md §8: merged sums take each stretch of time from the highest source).
public struct SourcesCommand: Command {
    /// A sources command.
    public init() {}

    /// `sources <type> [--priority list]`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "sources", abstract: "List a type's sources by priority, or set their order.",
            discussion: """
                Merged sums count each stretch of time from the highest-priority source that has data there.
                Example: hkq sources stepCount --priority "Anna's Apple Watch,com.apple.health.phone"
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount.")],
            options: [
                .option(
                    "priority", value: "list",
                    help: "Comma-separated source names or bundle ids, highest first; unlisted ones follow.")
            ])
    }

    /// Prints the (new) order: rank, name, bundle identifier, version, device.
    public func run(_ context: CommandContext) async throws {
        let type = try QuantityType.named(context.argument(0)!)
        let client = HealthClient(
            ClientConfiguration(
                host: context.globals.server.host, port: Int(context.globals.server.port),
                token: context.resolvedToken, clientName: "hkq"))
        defer { client.close() }
        let sources: [SourceInfo]
        if let text = context.arguments.value("priority") {
            let order = text.split(separator: ",").map { $0.trimmingWhitespace }
            if order.isEmpty || order.contains(where: \.isEmpty) {
                throw context.usageError("--priority needs comma-separated source names")
            }
            sources = try await client.setSourcePriority(
                type.identifier, subject: context.globals.subject, order: order)
        } else {
            sources = try await client.sourcePriority(type.identifier, subject: context.globals.subject)
        }
        var records = RecordSet(columns: [
            .init("rank", title: "RANK"), .init("name", title: "NAME"), .init("bundleIdentifier", title: "BUNDLE ID"),
            .init("version", title: "VERSION"), .init("device", title: "DEVICE"),
        ])
        for (rank, source) in sources.enumerated() {
            records.append([
                .integer(Int64(rank + 1)), .string(source.name), .string(source.bundleIdentifier),
                .string(source.version), .string(source.device),
            ])
        }
        context.print(records)
    }
}
