import Foundation
import HKQKit
import Testing

/// A parsed JSON value that keeps integers, other numbers and booleans apart (JSONSerialization on Linux does
/// not), for checking output against the shapes of docs/OUTPUT.md.
indirect enum Parsed: Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([Parsed])
    case object([String: Parsed])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([Parsed].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: Parsed].self))
        }
    }

    /// `text` parsed as JSON.
    static func parse(_ text: some StringProtocol) throws -> Parsed {
        try JSONDecoder().decode(Parsed.self, from: Data(text.utf8))
    }

    /// The value at `key` of an object.
    subscript(key: String) -> Parsed? {
        guard case .object(let pairs) = self else { return nil }
        return pairs[key]
    }

    /// The elements of an array (none for anything else).
    var elements: [Parsed] {
        guard case .array(let values) = self else { return [] }
        return values
    }

    /// The text of a string.
    var text: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }
}

/// The `shape` blocks of docs/OUTPUT.md, and the checks of real output against them.
enum OutputShapes {
    /// docs/OUTPUT.md, found from this file's path.
    static let document: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/OUTPUT.md"), encoding: .utf8)) ?? ""
    }()

    /// The lines `label: value` of the shape block under `## section`, by label (`json`, `csv`, `ndjson added`).
    static func block(_ section: String) -> [String: String] {
        let lines = document.components(separatedBy: "\n")
        guard let heading = lines.firstIndex(of: "## \(section)"),
            let open = lines[heading...].firstIndex(of: "```shape")
        else { return [:] }
        var entries: [String: String] = [:]
        for line in lines[(open + 1)...].prefix(while: { $0 != "```" }) {
            guard let colon = line.range(of: ": ") else { continue }
            entries[String(line[..<colon.lowerBound])] = String(line[colon.upperBound...])
        }
        return entries
    }

    /// The JSON template labelled `label` in `section`; records an issue when the document has none.
    static func template(_ section: String, _ label: String = "json") throws -> Parsed {
        let text = try #require(block(section)[label], "docs/OUTPUT.md has no '\(label)' shape under '## \(section)'")
        return try Parsed.parse(text)
    }

    /// What is wrong with `value` as an instance of `template` (empty when it fits).
    static func problems(_ value: Parsed, _ template: Parsed, at path: String = "$") -> [String] {
        switch template {
        case .object(let fields):
            guard case .object(let actual) = value else { return ["\(path): expected an object, got \(value)"] }
            var found: [String] = []
            var names: Set<String> = []
            for (key, shape) in fields {
                let optional = key.hasSuffix("?")
                let name = optional ? String(key.dropLast()) : key
                names.insert(name)
                guard let field = actual[name] else {
                    if !optional { found.append("\(path).\(name): missing") }
                    continue
                }
                found += problems(field, shape, at: "\(path).\(name)")
            }
            for key in actual.keys where !names.contains(key) { found.append("\(path).\(key): not documented") }
            return found
        case .array(let shapes):
            // `[shape, null]`: an array of `shape`, or null.
            if case .null = value, shapes.count == 2, case .null = shapes[1] { return [] }
            guard case .array(let values) = value else { return ["\(path): expected an array, got \(value)"] }
            guard let shape = shapes.first else { return [] }
            return values.enumerated().flatMap { problems($0.element, shape, at: "\(path)[\($0.offset)]") }
        case .string(let leaf):
            return leafProblem(value, leaf, at: path).map { [$0] } ?? []
        default:
            return ["\(path): the template holds \(template), not a type name"]
        }
    }

    /// Whether `value` is of leaf type `leaf` (`string`, `number`, `integer`, `bool`, `instant`, `uuid`,
    /// `seconds`, `map` — an object of integers keyed by name —, each optionally followed by `?` for null).
    static func leafProblem(_ value: Parsed, _ leaf: String, at path: String) -> String? {
        let nullable = leaf.hasSuffix("?")
        let type = nullable ? String(leaf.dropLast()) : leaf
        let fits: Bool
        switch (type, value) {
        case (_, .null): fits = nullable
        case ("string", .string): fits = true
        case ("number", .number), ("number", .integer), ("seconds", .number), ("seconds", .integer): fits = true
        case ("integer", .integer), ("bool", .bool): fits = true
        case ("map", .object(let entries)):
            fits = entries.allSatisfy { if case .integer = $0.value { true } else { false } }
        case ("metadata", .object(let entries)):
            fits = entries.allSatisfy { entry in
                switch entry.value {
                case .string, .number, .integer: true
                case .object(let fields):
                    Set(fields.keys) == ["date"] || Set(fields.keys) == ["value", "unit"]
                default: false
                }
            }
        case ("instant", .string(let text)): fits = isInstant(text)
        case ("uuid", .string(let text)): fits = UUID(uuidString: text) != nil
        default: fits = false
        }
        return fits ? nil : "\(path): \(value) is not \(leaf)"
    }

    /// Whether `text` is an RFC 3339 date-time with an offset (`Z` or `±HH:MM`), `T` between date and time.
    static func isInstant(_ text: String) -> Bool {
        guard let parsed = ISO8601Text.parse(text), parsed.hasTime, let offset = parsed.offsetSeconds,
            text.count > 10, text[text.index(text.startIndex, offsetBy: 10)] == "T"
        else { return false }
        return offset == 0 ? text.hasSuffix("Z") : text.suffix(6).first == (offset < 0 ? "-" : "+")
    }

    /// Checks JSON `text` against the `label` template of `section`.
    @discardableResult
    static func expectJSON(
        _ text: String, section: String, label: String = "json", sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Parsed {
        let value = try Parsed.parse(text)
        let found = problems(value, try template(section, label))
        #expect(found.isEmpty, "\(section): \(found.joined(separator: "; "))\n\(text)", sourceLocation: sourceLocation)
        return value
    }

    /// Checks CSV `text`: its header lists documented columns in their documented order, every required one
    /// included, and every row has one field per column; returns the rows as dictionaries.
    @discardableResult
    static func expectCSV(
        _ text: String, section: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [[String: String]] {
        let documented = try #require(block(section)["csv"], "no csv shape under '## \(section)'")
            .split(separator: ",").map(String.init)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        let header = try #require(lines.first.flatMap(CSV.fields), "no CSV header: \(text)")
        var position = documented.startIndex
        for column in header {
            // A documented `*` stands for any further columns (one per quantity type, say).
            if documented[position...].first == "*" { break }
            guard let index = documented[position...].firstIndex(where: { $0 == column || $0 == column + "?" }) else {
                Issue.record(
                    "\(section): column '\(column)' not documented (in order) in \(documented)",
                    sourceLocation: sourceLocation)
                return []
            }
            let skipped = documented[position..<index].filter { !$0.hasSuffix("?") }
            #expect(skipped.isEmpty, "\(section): required columns \(skipped) missing", sourceLocation: sourceLocation)
            position = index + 1
        }
        let rest = documented[position...].filter { !$0.hasSuffix("?") && $0 != "*" }
        #expect(rest.isEmpty, "\(section): required columns \(rest) missing", sourceLocation: sourceLocation)
        return try lines.dropFirst().map { line in
            let fields = try #require(CSV.fields(line), "bad CSV line \(line)")
            #expect(fields.count == header.count, "\(section): \(line)", sourceLocation: sourceLocation)
            return Dictionary(zip(header, fields), uniquingKeysWith: { first, _ in first })
        }
    }
}
