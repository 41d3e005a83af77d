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
        (1...12).contains(month) && day >= 1 && day <= CivilCalendar.daysInMonth(year: year, month: month)
            && (0...23).contains(hour) && (0...59).contains(minute) && (0...59).contains(second)
            && (0...999_999).contains(microsecond)
    }

    /// The instant this wall-clock time names at UTC offset `offsetSeconds` (east positive).
    public func timestamp(offsetSeconds: Int) -> Timestamp {
        let days = Int64(CivilCalendar.dayNumber(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return seconds * Micros.second + Int64(microsecond)
    }

    /// The wall-clock time of `timestamp` at UTC offset `offsetSeconds`.
    public init(timestamp: Timestamp, offsetSeconds: Int) {
        let local = timestamp + Int64(offsetSeconds) * Micros.second
        let (seconds, micros) = local.floorDivided(by: Micros.second)
        let (days, secondOfDay) = seconds.floorDivided(by: 86_400)
        let date = CivilCalendar.date(ofDay: Int(days))
        self.init(
            year: date.year, month: date.month, day: date.day, hour: Int(secondOfDay / 3600),
            minute: Int(secondOfDay % 3600 / 60), second: Int(secondOfDay % 60), microsecond: Int(micros))
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
