import HealthModel

/// A calendar date and wall-clock time with no zone attached: what ISO 8601 text spells out.
///
/// Conversions to and from days since 1970-01-01 use Howard Hinnant's proleptic Gregorian algorithms, so they
/// need no Foundation calendar and are exact for every year.
public struct CivilTime: Hashable, Sendable {
    /// The year, e.g. 2024.
    public var year: Int
    /// 1–12.
    public var month: Int
    /// 1–31 (checked against the month by ``isValid``).
    public var day: Int
    /// 0–23.
    public var hour: Int = 0
    /// 0–59.
    public var minute: Int = 0
    /// 0–59.
    public var second: Int = 0
    /// 0–999 999.
    public var microsecond: Int = 0

    /// A civil time from its parts; the time of day defaults to midnight.
    public init(
        year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, microsecond: Int = 0
    ) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.microsecond = microsecond
    }

    /// Whether every field is in range (day within its month, leap years included).
    public var isValid: Bool {
        (1...12).contains(month) && day >= 1 && day <= CivilTime.daysIn(month: month, year: year)
            && (0...23).contains(hour) && (0...59).contains(minute) && (0...59).contains(second)
            && (0...999_999).contains(microsecond)
    }

    /// The instant this wall-clock time names at UTC offset `offsetSeconds` (east positive).
    public func timestamp(offsetSeconds: Int) -> Timestamp {
        let days = Int64(CivilTime.days(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return seconds * Micros.second + Int64(microsecond)
    }

    /// The wall-clock time of `timestamp` at UTC offset `offsetSeconds`.
    public init(timestamp: Timestamp, offsetSeconds: Int) {
        let local = timestamp + Int64(offsetSeconds) * Micros.second
        let (seconds, micros) = local.floorDivided(by: Micros.second)
        let (days, secondOfDay) = seconds.floorDivided(by: 86_400)
        let (year, month, day) = CivilTime.civil(fromDays: Int(days))
        self.init(
            year: year, month: month, day: day, hour: Int(secondOfDay / 3600), minute: Int(secondOfDay % 3600 / 60),
            second: Int(secondOfDay % 60), microsecond: Int(micros))
    }

    /// Days in `month` of `year`.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given date (negative before).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Quotient rounded toward negative infinity and the matching non-negative remainder.
    func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var quotient = self / divisor
        var remainder = self % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }
}
