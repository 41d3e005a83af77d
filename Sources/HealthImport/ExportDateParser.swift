import HealthModel

/// Parses the dates of an export into instants, by hand (no `DateFormatter` per record).
///
/// Accepts `yyyy-MM-dd HH:mm:ss ±HHMM` (`2017-01-21 15:53:00 -0400`, what every current export writes), the older
/// `yyyyMMddHHmmss±HHMM` (`20170121155300-0400`), and as leniencies `T` between date and time, `±HH:MM` and `Z`.
/// The offset is required: it is what makes the local time an instant.
enum ExportDateParser {
    /// The instant `text` names, or `nil` when it is not one of the accepted forms or names no real time.
    static func parse(_ text: ByteSpan) -> Timestamp? {
        guard text.count >= 15 else { return nil }
        let fields: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)
        let zoneStart: Int
        if text[4] == ASCII.minus {
            guard text.count >= 20, text[7] == ASCII.minus, text[10] == ASCII.space || text[10] == 0x54,
                text[13] == ASCII.colon, text[16] == ASCII.colon,
                let year = number(text, 0, 4), let month = number(text, 5, 2), let day = number(text, 8, 2),
                let hour = number(text, 11, 2), let minute = number(text, 14, 2), let second = number(text, 17, 2)
            else { return nil }
            fields = (year, month, day, hour, minute, second)
            zoneStart = text[19] == ASCII.space ? 20 : 19
        } else {
            guard let year = number(text, 0, 4), let month = number(text, 4, 2), let day = number(text, 6, 2),
                let hour = number(text, 8, 2), let minute = number(text, 10, 2), let second = number(text, 12, 2)
            else { return nil }
            fields = (year, month, day, hour, minute, second)
            zoneStart = 14
        }
        guard let offsetSeconds = zoneOffset(text.slice(zoneStart..<text.count)),
            (1...12).contains(fields.month),
            (1...CivilCalendar.daysInMonth(year: fields.year, month: fields.month)).contains(fields.day),
            (0...23).contains(fields.hour), (0...59).contains(fields.minute), (0...59).contains(fields.second)
        else { return nil }
        let days = Int64(CivilCalendar.dayNumber(year: fields.year, month: fields.month, day: fields.day))
        let local = days * 86_400 + Int64(fields.hour * 3600 + fields.minute * 60 + fields.second)
        return (local - Int64(offsetSeconds)) * Micros.second
    }

    /// Seconds east of UTC for `±HHMM`, `±HH:MM` or `Z`; `nil` for anything else or beyond ±18:00.
    private static func zoneOffset(_ zone: ByteSpan) -> Int? {
        if zone.count == 1, zone[0] == ASCII.upperZ { return 0 }
        guard zone.count == 5 || (zone.count == 6 && zone[3] == ASCII.colon),
            zone[0] == ASCII.plus || zone[0] == ASCII.minus,
            let hours = number(zone, 1, 2), let minutes = number(zone, zone.count - 2, 2),
            hours <= 18, minutes <= 59
        else { return nil }
        let seconds = hours * 3600 + minutes * 60
        return zone[0] == ASCII.minus ? -seconds : seconds
    }

    /// The decimal number in `length` digits at `start`, or `nil` if any is not a digit.
    @inline(__always)
    private static func number(_ text: ByteSpan, _ start: Int, _ length: Int) -> Int? {
        var value = 0
        for i in start..<start + length {
            let digit = text[i] &- ASCII.zero
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }
}
