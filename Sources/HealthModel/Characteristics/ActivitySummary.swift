/// One local day's activity as Apple computed it (HealthKit's `HKActivitySummary`, the export's
/// `<ActivitySummary>`; HEALTHKIT.md §13): move, exercise and stand values and their goals, kept as imported.
///
/// Every value is optional (exports leave out what the watch did not measure) and kept in the unit written:
/// active energy in ``activeEnergyBurnedUnit`` (`kcal`, `Cal`, `kJ`), move and exercise time in minutes, stand
/// hours as a count.
public struct ActivitySummary: Hashable, Sendable {
    /// The values a summary may carry, in their wire order (bit i of the presence bits is field i).
    public enum Field: String, CaseIterable, Sendable {
        case activeEnergyBurned
        case activeEnergyBurnedGoal
        case appleMoveTime
        case appleMoveTimeGoal
        case appleExerciseTime
        case appleExerciseTimeGoal
        case appleStandHours
        case appleStandHoursGoal

        /// Its bit in the presence bits.
        public var bit: UInt8 { 1 << UInt8(Field.allCases.firstIndex(of: self)!) }
    }

    /// Longest energy unit symbol kept.
    public static let maxUnitLength = 32

    /// The local day: days since 1970-01-01 (``CivilCalendar``), years 0001–9999.
    public var day: Int
    /// The values present, by field.
    public var values: [Field: Double]
    /// The unit of the active energy and its goal as written (`kcal`); empty when neither is present.
    public var activeEnergyBurnedUnit: String

    /// A summary for `day` (a day number) with `values`.
    public init(day: Int, values: [Field: Double] = [:], activeEnergyBurnedUnit: String = "") {
        self.day = day
        self.values = values
        self.activeEnergyBurnedUnit = activeEnergyBurnedUnit
    }

    /// The value of `field`, `nil` when absent.
    public subscript(field: Field) -> Double? {
        get { values[field] }
        set { values[field] = newValue }
    }

    /// The day as `YYYY-MM-DD`.
    public var dayText: String { CivilCalendar.text(ofDay: day) }

    /// The first and last day numbers a summary may have (0001-01-01 … 9999-12-31).
    public static let days =
        CivilCalendar.dayNumber(
            year: 1, month: 1, day: 1)...CivilCalendar.dayNumber(
            year: 9999, month: 12, day: 31)

    /// Throws ``ErrorCode/invalidSample`` naming the day and the problem: a day outside years 0001–9999, a value
    /// that is negative or not finite, an energy unit that does not measure energy (or one without an energy
    /// value).
    public func validate() throws {
        guard Self.days.contains(day) else {
            throw HealthError(.invalidSample, "activity summary day \(day) lies outside years 0001-9999")
        }
        for (field, value) in values where !(value.isFinite && value >= 0) {
            throw HealthError(
                .invalidSample, "activity summary \(dayText): \(field.rawValue) \(value) is not a finite value ≥ 0")
        }
        let hasEnergy = values[.activeEnergyBurned] != nil || values[.activeEnergyBurnedGoal] != nil
        if activeEnergyBurnedUnit.isEmpty {
            guard !hasEnergy else {
                throw HealthError(.invalidSample, "activity summary \(dayText): active energy without a unit")
            }
            return
        }
        guard activeEnergyBurnedUnit.utf8.count <= Self.maxUnitLength,
            let unit = try? HealthUnit(parsing: activeEnergyBurnedUnit), unit.isCompatible(with: Self.energyUnit)
        else {
            throw HealthError(
                .invalidSample,
                "activity summary \(dayText): \"\(activeEnergyBurnedUnit.prefix(40))\" is not an energy unit")
        }
    }

    /// The unit active energy is compared in (kilocalories).
    // swift-format-ignore: NeverUseForceTry
    public static let energyUnit = try! HealthUnit(parsing: "kcal")

    /// `field`'s value in kilocalories (the energy fields only), `nil` when absent or not convertible.
    public func kilocalories(_ field: Field) -> Double? {
        guard let value = values[field], let unit = try? HealthUnit(parsing: activeEnergyBurnedUnit) else { return nil }
        return try? unit.convert(value, to: Self.energyUnit)
    }
}

extension CivilCalendar {
    /// Day number `day` as `YYYY-MM-DD` (years 0001–9999; others as their number).
    public static func text(ofDay day: Int) -> String {
        let date = date(ofDay: day)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(date.year, 4))-\(padded(date.month, 2))-\(padded(date.day, 2))"
    }

    /// The day number of `YYYY-MM-DD` (years 0001–9999, a real day of its month), or `nil`.
    public static func day(parsing text: some StringProtocol) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (48...57).contains(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), year >= 1,
            (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        return dayNumber(year: year, month: month, day: day)
    }
}

extension ActivitySummary: CustomStringConvertible, CustomDebugStringConvertible {
    /// `2023-11-14 activeEnergyBurned=512.25 … (kcal)`: the day, then the values present in field order.
    public var description: String {
        let values = Field.allCases.compactMap { field in self.values[field].map { "\(field.rawValue)=\($0)" } }
        let unit = activeEnergyBurnedUnit.isEmpty ? [] : ["(\(activeEnergyBurnedUnit))"]
        return ([dayText] + values + unit).joined(separator: " ")
    }

    /// The same as ``description``, so that reflection prints the values in a fixed order.
    public var debugDescription: String { "ActivitySummary(\(description))" }
}
