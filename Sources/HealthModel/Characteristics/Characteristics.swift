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
    /// value or a `...NotSet` one clears it. Throws ``ErrorCode/invalidArgument`` for a value HealthKit does not
    /// have (``validated(_:_:)``), leaving the key as it was.
    public mutating func set(_ key: CharacteristicKey, _ value: String) throws {
        values[key] = try Characteristics.validated(key, value)
    }

    /// Sets `key` to a value read back from a store or a server, checked for its form only (``normalized(_:_:)``):
    /// a value an earlier version kept, or one a newer server knows, stays readable. A value of another form
    /// clears the key.
    public mutating func set(_ key: CharacteristicKey, stored value: String) {
        values[key] = (try? Characteristics.normalized(key, value)) ?? nil
    }

    /// The short form of `value` for `key` (``normalized(_:_:)``), checked against HealthKit: one of the key's
    /// ``CharacteristicKey/knownValues``, or for the date of birth a day of the Gregorian calendar in years
    /// 0001–9999 (``SupportedInstants``). `nil` for not set; throws ``ErrorCode/invalidArgument`` naming the key,
    /// the value and what the key takes. What the importer, hkq and hkd check a new value by.
    public static func validated(_ key: CharacteristicKey, _ value: String) throws -> String? {
        guard let short = try normalized(key, value) else { return nil }
        if let known = key.knownValues {
            guard known.contains(short) else {
                throw HealthError(
                    .invalidArgument,
                    "\(key.rawValue) \"\(value.prefix(40))\" is not one of HealthKit's values: "
                        + known.joined(separator: ", "))
            }
        } else if !isCalendarDay(short) {
            throw HealthError(
                .invalidArgument,
                "dateOfBirth \"\(value.prefix(40))\" is not a day of the calendar in \(SupportedInstants.description)")
        }
        return short
    }

    /// The short form of `value` for `key`, `nil` for not set; throws ``ErrorCode/invalidArgument`` for a value not
    /// of the key's form (a date `YYYY-MM-DD`, else letters and digits). Not checked against HealthKit's values
    /// (``validated(_:_:)`` is): how stored values are read back, so a data directory opens whatever it holds.
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

    /// Whether `date`, of the form `YYYY-MM-DD`, names a day: a year 0001–9999, and a day its month has.
    private static func isCalendarDay(_ date: String) -> Bool {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, (1...9999).contains(parts[0]), (1...12).contains(parts[1]) else { return false }
        return (1...CivilCalendar.daysInMonth(year: parts[0], month: parts[1])).contains(parts[2])
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
