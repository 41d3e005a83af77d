import HealthModel

/// `--fields a,b,c`: the keys (JSON) and columns (CSV, tables) to print, in the order given.
///
/// Applies to commands whose output is a list of records (``CommandSpec/selectsFields``); a field the
/// command does not print is a usage error listing those it does.
public struct FieldSelection: Sendable, Equatable {
    /// The field names, in output order, without duplicates.
    public var fields: [String]

    /// A selection of `fields` (non-empty, no duplicates).
    public init(_ fields: [String]) { self.fields = fields }

    /// Parses `a,b,c` (spaces around names ignored); a usage error for an empty name or a repeated one.
    public init(parsing text: String, commandPath: [String] = []) throws {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map(\.trimmingWhitespace)
        if names.contains(where: \.isEmpty) {
            throw UsageError(
                "invalid value '\(text)' for '--fields'; expected field names separated by commas",
                commandPath: commandPath)
        }
        var seen = Set<String>()
        for name in names where !seen.insert(name).inserted {
            throw UsageError("field '\(name)' is given twice in '--fields'", commandPath: commandPath)
        }
        self.init(names)
    }

    /// Throws a usage error naming the first field not in `known` (with the nearest known one, when close, and
    /// every known one).
    public func check(known: [String], commandPath: [String]) throws {
        guard let unknown = fields.first(where: { !known.contains($0) }) else { return }
        let hint = Suggestion.nearest(to: unknown, among: known).map { "; did you mean '\($0)'?" } ?? ""
        throw UsageError(
            "unknown field '\(unknown)' in '--fields'\(hint) (fields: \(known.joined(separator: ", ")))",
            commandPath: commandPath)
    }

    /// The pairs of one JSON object keyed by the selected fields, in their order; a field the object lacks (an
    /// optional key such as `metadata`) is left out.
    public func select(_ pairs: [(String, JSONValue)]) -> [(String, JSONValue)] {
        fields.compactMap { field in pairs.first { $0.0 == field } }
    }
}

extension RecordSet {
    /// The records with only the columns named by `selection`, in its order, each shown in tables; throws a
    /// usage error for a field that is not a column (or one of `extraFields`, keys only some JSON objects carry,
    /// such as `metadata`, which are skipped here).
    public func selecting(
        _ selection: FieldSelection, extraFields: [String] = [], commandPath: [String]
    ) throws -> RecordSet {
        let keys = columns.map(\.key)
        try selection.check(known: keys + extraFields, commandPath: commandPath)
        let indices = selection.fields.compactMap { keys.firstIndex(of: $0) }
        var selected = RecordSet(
            columns: indices.map { index in
                var column = columns[index]
                column.inTable = true
                return column
            })
        selected.rows = rows.map { row in indices.map { row[$0] } }
        return selected
    }
}
