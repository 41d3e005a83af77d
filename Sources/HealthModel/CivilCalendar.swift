/// Proleptic Gregorian date arithmetic on day numbers (days since 1970-01-01), with no time zone.
///
/// The algorithms are Howard Hinnant's `days_from_civil` / `civil_from_days`: exact for any year that fits,
/// negative years included, with no tables and no Foundation. The one implementation the engine's calendars,
/// the export importer, hkq and hkbench share.
public enum CivilCalendar {
    /// A calendar date: year (astronomical numbering, 0 = 1 BC), month 1...12, day 1...31.
    public struct Date: Hashable, Sendable {
        public var year: Int
        public var month: Int
        public var day: Int

        /// The date `year-month-day` (not checked).
        public init(year: Int, month: Int, day: Int) {
            self.year = year
            self.month = month
            self.day = day
        }
    }

    /// The day number of `year-month-day` (0 is 1970-01-01).
    public static func dayNumber(year: Int, month: Int, day: Int) -> Int {
        dayNumber(Date(year: year, month: month, day: day))
    }

    /// The day number of `date` (0 is 1970-01-01).
    public static func dayNumber(_ date: Date) -> Int {
        let year = date.month <= 2 ? date.year - 1 : date.year
        let era = floorDivide(year, 400)
        let yearOfEra = year - era * 400
        let shiftedMonth = date.month > 2 ? date.month - 3 : date.month + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + date.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of day number `day` (0 is 1970-01-01).
    public static func date(ofDay day: Int) -> Date {
        let shifted = day + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return Date(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: dayOfMonth)
    }

    /// Days in `month` of `year` (28...31).
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Whether `year` has a February 29.
    public static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }
}

/// `a / b` rounded toward minus infinity (`b > 0`).
@inlinable @inline(__always)
public func floorDivide<Integer: BinaryInteger>(_ a: Integer, _ b: Integer) -> Integer {
    let quotient = a / b
    return a % b < 0 ? quotient - 1 : quotient
}
