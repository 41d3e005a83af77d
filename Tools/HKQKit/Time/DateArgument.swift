import Foundation
import HealthModel

/// Reads the dates people type after `--from` and `--to`, in a time zone and relative to an injectable "now".
///
/// Accepted forms:
/// - ISO 8601 with an offset: `2024-03-10T08:00:00-05:00`, `2024-03-10T13:00Z`, fractional seconds allowed;
/// - a local date-time without offset, `2024-03-10T08:00`, and a bare date, `2024-03-10` (local midnight);
/// - `now`, `today` (local midnight), `yesterday`, `tomorrow`, each optionally followed by one offset
///   `±N` and a unit `s`, `m` (minutes), `h`, `d` or `w`: `now-7d`, `now-2h`, `now-30m`, `today-6d`.
///   Seconds, minutes and hours are elapsed time; days and weeks are calendar days in the zone, so `now-1d`
///   on the day after a DST change is the same wall-clock time yesterday (23 or 25 hours ago).
public struct DateArgumentParser: Sendable {
    /// The zone that local dates, midnight and calendar days are read in.
    public var timeZone: TimeZone
    /// The instant `now` means.
    public var now: Timestamp

    /// A parser for `timeZone` with `now` fixed (tests inject it; hkq passes the clock's reading).
    public init(timeZone: TimeZone, now: Timestamp) {
        self.timeZone = timeZone
        self.now = now
    }

    /// The forms accepted, for error messages.
    public static let expected =
        "an ISO 8601 date-time (2024-03-10T08:00:00-05:00), a date (2024-03-10), today, yesterday, now, now-7d, now-2h or now-30m"

    /// The instant `text` names, or `nil` when it is none of the accepted forms.
    public func parse(_ text: String) -> Timestamp? {
        let trimmed = text.trimmingWhitespace
        if let parsed = ISO8601Text.parse(trimmed) {
            if let offset = parsed.offsetSeconds { return parsed.civil.timestamp(offsetSeconds: offset) }
            return local(parsed.civil)
        }
        return relative(trimmed.lowercased())
    }

    /// `now`, `today`, `yesterday`, `tomorrow` with an optional `±N unit`.
    func relative(_ text: String) -> Timestamp? {
        let bases = ["yesterday", "tomorrow", "today", "now"]
        guard let base = bases.first(where: { text.hasPrefix($0) }) else { return nil }
        let origin: Timestamp
        switch base {
        case "now": origin = now
        case "today": origin = startOfDay(now, addingDays: 0)
        case "yesterday": origin = startOfDay(now, addingDays: -1)
        default: origin = startOfDay(now, addingDays: 1)
        }
        let rest = text.dropFirst(base.count)
        if rest.isEmpty { return origin }
        guard let sign = rest.first, sign == "+" || sign == "-", let unit = rest.last,
            let amount = Int64(rest.dropFirst().dropLast()), (0...1_000_000).contains(amount)
        else { return nil }
        let signed = sign == "-" ? -amount : amount
        switch unit {
        case "s": return origin + signed * Micros.second
        case "m": return origin + signed * Micros.minute
        case "h": return origin + signed * Micros.hour
        case "d": return adding(days: Int(signed), to: origin)
        case "w": return adding(days: Int(signed) * 7, to: origin)
        default: return nil
        }
    }

    /// The calendar in ``timeZone``.
    var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// Local midnight of the day `days` after the one holding `instant`.
    func startOfDay(_ instant: Timestamp, addingDays days: Int) -> Timestamp {
        let midnight = calendar.startOfDay(for: Self.date(instant))
        guard days != 0 else { return Self.timestamp(midnight) }
        return adding(days: days, to: Self.timestamp(midnight))
    }

    /// The same wall-clock time `days` calendar days later (earlier when negative).
    func adding(days: Int, to instant: Timestamp) -> Timestamp {
        let (seconds, micros) = instant.floorDivided(by: Micros.second)
        guard let moved = calendar.date(byAdding: .day, value: days, to: Date(timeIntervalSince1970: Double(seconds)))
        else { return instant }
        return Self.timestamp(moved) + micros
    }

    /// The instant a wall-clock time names in ``timeZone``, as Foundation's `Calendar` reads it: a time that
    /// occurs twice is the first, one in a DST gap moves later by the gap. Through ``ZoneOffsetWalker``: setting
    /// up a `Calendar` is a large part of a short command's time.
    func local(_ civil: CivilTime) -> Timestamp {
        var offsets = ZoneOffsetWalker(zone: timeZone)
        return offsets.instant(atLocal: civil.timestamp(offsetSeconds: 0), repeated: .first)
    }

    /// A timestamp as a Foundation date.
    static func date(_ instant: Timestamp) -> Date { Date(timeIntervalSince1970: Double(instant) / 1e6) }

    /// A Foundation date as a timestamp, rounded to the microsecond.
    static func timestamp(_ date: Date) -> Timestamp { Timestamp((date.timeIntervalSince1970 * 1e6).rounded()) }
}
