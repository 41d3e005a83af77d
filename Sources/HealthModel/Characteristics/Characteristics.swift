/// One characteristic HealthKit keeps per person rather than as samples (HKCharacteristicType; HEALTHKIT.md §13).
public enum CharacteristicKey: String, CaseIterable, Hashable, Sendable, Comparable {
    case dateOfBirth
    case biologicalSex
    case bloodType
    case fitzpatrickSkinType
    case wheelchairUse
    case activityMoveMode
    case cardioFitnessMedicationsUse

    /// The attribute of the export's `<Me>` element, e.g. `HKCharacteristicTypeIdentifierBiologicalSex`.
    public var exportAttribute: String {
        "HKCharacteristicTypeIdentifier" + rawValue.prefix(1).uppercased() + rawValue.dropFirst()
    }

    /// The prefix of the export's values for the key (`HKBiologicalSex` in `HKBiologicalSexFemale`); `nil` for the
    /// date of birth, which is a plain `YYYY-MM-DD`.
    public var valuePrefix: String? {
        switch self {
        case .dateOfBirth: nil
        default: "HK" + rawValue.prefix(1).uppercased() + rawValue.dropFirst()
        }
    }

    public static func < (lhs: CharacteristicKey, rhs: CharacteristicKey) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A person's characteristics: at most one value per ``CharacteristicKey``; a key without a value is not set
/// (HealthKit's `...NotSet`, or an empty attribute in the export).
///
/// Values are kept in a short form: the export's value without its prefix, first letter lowered unless the rest
/// is a Roman numeral (`HKBiologicalSexFemale` → `female`, `HKBloodTypeAPositive` → `aPositive`,
/// `HKFitzpatrickSkinTypeIII` → `III`; a leading run of capitals is lowered but for the one that starts the next
/// word, `HKBloodTypeABNegative` → `abNegative`), and the date of birth as `YYYY-MM-DD`.
public struct Characteristics: Hashable, Sendable {
    /// The values set, by key.
    public private(set) var values: [CharacteristicKey: String] = [:]

    /// No characteristic set.
    public init() {}

    /// Whether no characteristic is set.
    public var isEmpty: Bool { values.isEmpty }

    /// The value of `key`, or `nil` when not set.
    public subscript(key: CharacteristicKey) -> String? { values[key] }

    /// Sets `key` to `value` in short form or in the export's form (`female` or `HKBiologicalSexFemale`); an empty
    /// value or a `...NotSet` one clears it. Throws ``ErrorCode/invalidArgument`` for a value the key does not take.
    public mutating func set(_ key: CharacteristicKey, _ value: String) throws {
        values[key] = try Characteristics.normalized(key, value)
    }

    /// The short form of `value` for `key`, `nil` for not set; throws ``ErrorCode/invalidArgument`` when invalid.
    public static func normalized(_ key: CharacteristicKey, _ value: String) throws -> String? {
        let text = value.trimmingSpaces
        if text.isEmpty || text == "notSet" || text == "NotSet" { return nil }
        guard let prefix = key.valuePrefix else {
            guard isCivilDate(text) else {
                throw HealthError(.invalidArgument, "dateOfBirth \"\(text.prefix(40))\" is not a YYYY-MM-DD date")
            }
            return text
        }
        var rest = Substring(text)
        if rest.hasPrefix(prefix) { rest = rest.dropFirst(prefix.count) }
        if rest == "NotSet" { return nil }
        guard !rest.isEmpty, rest.count <= 64, rest.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw HealthError(.invalidArgument, "\(key.rawValue) \"\(text.prefix(40))\" is not a valid value")
        }
        if rest.allSatisfy({ "IVX".contains($0) }) { return String(rest) }
        // Lower the leading capitals, all but the one starting the next word: `ABPositive` → `abPositive`.
        let capitals = rest.prefix { $0.isUppercase }.count
        let lowered = capitals > 1 && capitals < rest.count ? capitals - 1 : max(capitals, 1)
        return rest.prefix(lowered).lowercased() + rest.dropFirst(lowered)
    }

    private static func isCivilDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
        for index in [0, 1, 2, 3, 5, 6, 8, 9] where !(48...57).contains(bytes[index]) { return false }
        let month = Int(bytes[5] - 48) * 10 + Int(bytes[6] - 48)
        let day = Int(bytes[8] - 48) * 10 + Int(bytes[9] - 48)
        return (1...12).contains(month) && (1...31).contains(day)
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
