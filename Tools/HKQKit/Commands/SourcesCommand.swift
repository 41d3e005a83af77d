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
                    help: "Comma-separated source names or bundle ids, highest first; unlisted ones follow."),
                .flag(
                    "allow-unseen",
                    help: "Accept --priority names that match no stored source of the type (ranked for later)."),
            ], selectsFields: true)
    }

    /// Prints the (new) order: rank, name, bundle identifier, version, device.
    public func run(_ context: CommandContext) async throws {
        let type = try QuantityType.named(context.argument(0)!)
        let client = ServerSession.client(context)
        defer { client.close() }
        var records = RecordSet(columns: [
            .init("rank", title: "RANK"), .init("name", title: "NAME"), .init("bundleIdentifier", title: "BUNDLE ID"),
            .init("version", title: "VERSION"), .init("device", title: "DEVICE"),
        ])
        // An unknown --fields name is refused before a new order is stored.
        _ = try context.selected(records)
        let sources: [SourceInfo]
        if let text = context.arguments.value("priority") {
            let order = text.split(separator: ",").map { $0.trimmingWhitespace }
            if order.isEmpty || order.contains(where: \.isEmpty) {
                throw context.usageError("--priority needs comma-separated source names")
            }
            if !context.arguments.flag("allow-unseen") {
                let known = try await client.sourcePriority(type.identifier, subject: context.globals.subject)
                try SourceNames.check(order, against: known, type: type.identifier, subject: context.globals.subject)
            }
            sources = try await client.setSourcePriority(
                type.identifier, subject: context.globals.subject, order: order)
        } else {
            sources = try await client.sourcePriority(type.identifier, subject: context.globals.subject)
        }
        for (rank, source) in sources.enumerated() {
            records.append([
                .integer(Int64(rank + 1)),
                .string(context.globals.format == .table ? SourceNames.shown(source.name) : source.name),
                .string(source.bundleIdentifier),
                .string(source.version), .string(source.device),
            ])
        }
        try context.print(records)
    }
}

/// Telling source names apart: checking `--priority` names against the stored sources, and showing names with
/// their look-alike characters visible.
enum SourceNames {
    /// `name` quoted, with every character outside printable ASCII but letters written as `\u{XXXX}`, so `’` and
    /// a no-break space show as themselves cannot be mistaken for `'` and a space.
    static func shown(_ name: String) -> String {
        var text = "\""
        for scalar in name.unicodeScalars {
            if scalar == "\"" || scalar == "\\" {
                text += "\\\(Character(scalar))"
            } else if scalar.isASCII ? scalar.value >= 0x20 && scalar.value < 0x7F : scalar.properties.isAlphabetic {
                text.unicodeScalars.append(scalar)
            } else {
                text += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return text + "\""
    }

    /// `name` for comparison: quotes, apostrophes and spaces of every kind folded to ASCII, case folded.
    static func normalised(_ name: String) -> String {
        var text = ""
        for scalar in name.precomposedStringWithCompatibilityMapping.unicodeScalars {
            switch scalar.value {
            case 0x2018, 0x2019, 0x201B, 0x2032, 0x02BC, 0xFF07: text += "'"
            case 0x201C, 0x201D, 0x201F, 0x2033: text += "\""
            default:
                if scalar.properties.isWhitespace { text += " " } else { text.unicodeScalars.append(scalar) }
            }
        }
        return text.lowercased()
    }

    /// Refuses a name in `order` that is neither the name nor the bundle id of a source in `known`, naming the
    /// closest real names.
    static func check(_ order: [String], against known: [SourceInfo], type: String, subject: String) throws {
        let names = known.flatMap { [$0.name, $0.bundleIdentifier] }.filter { !$0.isEmpty }
        for wanted in order where !names.contains(wanted) {
            let target = normalised(wanted)
            let candidates: [String] = Set(known.map(\.name)).sorted()
            let ranked: [(name: String, distance: Int)] = candidates.map { name in
                (name: name, distance: distance(normalised(name), target))
            }
            let sorted = ranked.sorted { a, b in a.distance != b.distance ? a.distance < b.distance : a.name < b.name }
            let closest: [String] = sorted.prefix(3).map { shown($0.name) }
            var message = "no source \(shown(wanted)) has \(type) samples for \(subject)"
            message += closest.isEmpty ? "" : "; closest: \(closest.joined(separator: ", "))"
            message += " (--allow-unseen ranks it anyway)"
            throw HealthError(.invalidArgument, message)
        }
    }

    /// Levenshtein distance between the characters of `a` and `b`.
    static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        var previous = Array(0...y.count)
        for i in 1...max(x.count, 1) where !x.isEmpty {
            var current = [i] + Array(repeating: 0, count: y.count)
            for j in 1...max(y.count, 1) where !y.isEmpty {
                let substitution: Int = previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1)
                let edit: Int = min(previous[j] + 1, current[j - 1] + 1)
                current[j] = min(edit, substitution)
            }
            previous = current
        }
        return x.isEmpty ? y.count : previous[y.count]
    }
}
