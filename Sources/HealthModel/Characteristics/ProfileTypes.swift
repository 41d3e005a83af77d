/// A type for grants, log records and the snapshot manifest that is neither a quantity nor a category type and
/// is kept per subject rather than as samples (HEALTHKIT.md §13): the characteristics and the activity summaries.
public struct ProfileType: Hashable, Sendable {
    /// The short identifier grants, log records and the manifest use (`characteristics`).
    public let identifier: String
    /// Other names accepted wherever ``identifier`` is (HealthKit's identifiers), compared in any case.
    public let aliases: [String]

    /// The characteristics (date of birth, biological sex …): read with the read grant, set with the share grant.
    public static let characteristics = ProfileType(
        identifier: "characteristics", aliases: ["HKCharacteristicType", "characteristic"])
    /// Apple's daily activity summaries (move, exercise, stand): read with the read grant, stored with the share
    /// grant.
    public static let activitySummary = ProfileType(
        identifier: "activitySummary", aliases: ["HKActivitySummaryTypeIdentifier", "activitySummaries", "activity"])

    /// Both profile types.
    public static let all = [characteristics, activitySummary]

    /// Whether `name` names this type (its identifier or an alias, any case).
    public func matches(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered == identifier.lowercased() || aliases.contains { $0.lowercased() == lowered }
    }

    /// The profile type `name` names, or `nil`.
    public static func named(_ name: String) -> ProfileType? {
        all.first { $0.matches(name) }
    }
}

/// One characteristic as the protocol and the log carry it: a key and a value as written, both unchecked until
/// ``checked()`` (an empty value clears the key when setting).
public struct CharacteristicEntry: Hashable, Sendable {
    /// The key's short name (`biologicalSex`).
    public var key: String
    /// The value in short or export form (`female`, `HKBiologicalSexFemale`); empty: not set.
    public var value: String

    /// An entry from its parts.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// The key and the normalized value (`nil`: clear). Throws ``ErrorCode/invalidArgument`` naming an unknown key
    /// (and the keys known) or a value the key does not take.
    public func checked() throws -> (key: CharacteristicKey, value: String?) {
        guard let known = CharacteristicKey(rawValue: key) else {
            let names = CharacteristicKey.allCases.map(\.rawValue).joined(separator: ", ")
            throw HealthError(.invalidArgument, "unknown characteristic \"\(key.prefix(40))\" (known: \(names))")
        }
        return (known, try Characteristics.normalized(known, value))
    }

    /// The key and the value as ``checked()`` gives them, the value also checked against HealthKit's
    /// (``Characteristics/validated(_:_:)``): how a request to set characteristics is checked. Throws
    /// ``ErrorCode/invalidArgument`` naming the key, the value and what the key takes.
    public func validated() throws -> (key: CharacteristicKey, value: String?) {
        let (known, _) = try checked()
        return (known, try Characteristics.validated(known, value))
    }

    /// The entries of `characteristics`, in key order.
    public static func entries(of characteristics: Characteristics) -> [CharacteristicEntry] {
        characteristics.values.sorted { $0.key < $1.key }.map {
            CharacteristicEntry(key: $0.key.rawValue, value: $0.value)
        }
    }
}
