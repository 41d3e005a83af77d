import HealthClient
import HealthModel

/// `hkq characteristics`: the subject's characteristics (HEALTHKIT.md §13), one row per key, set or not;
/// `hkq characteristics set key=value ...` sets or clears them.
public struct CharacteristicsCommand: Command {
    /// A characteristics command.
    public init() {}

    /// `characteristics`, runnable by itself, with `set`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "characteristics", abstract: "Show the subject's characteristics (date of birth, sex, blood type …).",
            discussion: """
                One row per characteristic: key and value (empty when not set). Reading needs the read grant \
                for the type characteristics. Set them with 'hkq characteristics set key=value ...'; hkq import \
                stores the export's <Me> values. Example: hkq characteristics --subject anna --format json.
                """,
            subcommands: [CharacteristicsSetCommand()], runsWithoutSubcommand: true, selectsFields: true)
    }

    /// Queries the characteristics and prints them.
    public func run(_ context: CommandContext) async throws {
        let subject = context.globals.subject
        let characteristics = try await ServerSession.run(context) { client in
            try await client.characteristics(subject: subject)
        }
        try context.print(Self.records(characteristics))
    }

    /// One record per key, in key order: key and value (null when not set).
    static func records(_ characteristics: Characteristics) -> RecordSet {
        var records = RecordSet(columns: [.init("key", title: "KEY"), .init("value", title: "VALUE")])
        for key in CharacteristicKey.allCases {
            records.append([.string(key.rawValue), characteristics[key].map(JSONValue.string) ?? .null])
        }
        return records
    }
}

/// `hkq characteristics set key=value ...`: sets (or, with an empty value or `notSet`, clears) characteristics,
/// each value checked against HealthKit's values before anything is sent.
public struct CharacteristicsSetCommand: Command {
    /// A set command.
    public init() {}

    /// `set` with its `key=value` arguments.
    public var spec: CommandSpec {
        CommandSpec(
            name: "set", abstract: "Set or clear characteristics: key=value ... (an empty value clears).",
            discussion: """
                Keys and values (HealthKit's, in short form; the export's form such as HKBiologicalSexFemale is \
                accepted too):
                \(Self.valueList)
                A key given an empty value (biologicalSex=) or notSet is cleared. Needs the share grant for the \
                type characteristics, or an admin token. Prints the characteristics afterwards. Example: hkq \
                characteristics set dateOfBirth=1984-05-01 biologicalSex=female bloodType=oPositive.
                """,
            arguments: [
                ArgumentSpec(
                    "key=value", help: "A characteristic and its value, e.g. biologicalSex=female.", isVariadic: true)
            ])
    }

    /// The keys and their values, one indented line each.
    static var valueList: String {
        CharacteristicKey.allCases.map { key in
            "  \(key.rawValue): " + (key.knownValues?.joined(separator: ", ") ?? "a date, YYYY-MM-DD")
        }.joined(separator: "\n")
    }

    /// Checks every pair, sets them and prints the result.
    public func run(_ context: CommandContext) async throws {
        let entries = try context.arguments.positionals.map { try Self.entry($0, context: context) }
        let subject = context.globals.subject
        let result = try await ServerSession.run(context) { client in
            try await client.setCharacteristics(entries, subject: subject)
        }
        try context.print(CharacteristicsCommand.records(result))
    }

    /// The entry of one `key=value` argument; a usage error names a missing `=`, an unknown key (with the keys) or
    /// a value the key does not take (with its values).
    static func entry(_ argument: String, context: CommandContext) throws -> CharacteristicEntry {
        guard let equals = argument.firstIndex(of: "=") else {
            throw context.usageError("expected key=value, got '\(argument)'")
        }
        let name = String(argument[..<equals])
        let value = String(argument[argument.index(after: equals)...])
        guard let key = CharacteristicKey.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() })
        else {
            let keys = CharacteristicKey.allCases.map(\.rawValue).joined(separator: ", ")
            throw context.usageError("unknown characteristic '\(name)'; expected one of \(keys)")
        }
        let normalized: String?
        do {
            normalized = try Characteristics.validated(key, value)
        } catch {
            throw context.usageError(Self.invalid(key, value))
        }
        return CharacteristicEntry(key: key.rawValue, value: normalized ?? "")
    }

    private static func invalid(_ key: CharacteristicKey, _ value: String) -> String {
        let expected = key.knownValues?.joined(separator: ", ") ?? "a date YYYY-MM-DD"
        return "invalid value '\(value)' for '\(key.rawValue)'; expected \(expected), or nothing to clear it"
    }
}
