import HealthModel

/// Parses the dates of an export into instants, by hand (no `DateFormatter` per record).
///
/// Accepts `yyyy-MM-dd HH:mm:ss ±HHMM` (`2017-01-21 15:53:00 -0400`, what every current export writes), the older
/// `yyyyMMddHHmmss±HHMM` (`20170121155300-0400`), and as leniencies `T` between date and time, `±HH:MM` and `Z`.
/// The offset is required: it is what makes the local time an instant.
///
/// Phones whose region prefers a 12-hour clock or other digits have written the same fields their way, since
/// Apple's date formatter follows the region unless told not to: `2024-09-21 7:57:00 PM +1000` (with a space, a
/// no-break space or U+202F before the marker, `am`, `a.m.` …), Arabic-Indic, Persian, Devanagari or full-width
/// digits. Those are read too (``parseLocalized(_:)``), off the fast path.
enum ExportDateParser {
    /// The instant `text` names, or `nil` when it is not one of the accepted forms or names no real time.
    static func parse(_ text: ByteSpan) -> Timestamp? {
        if let instant = parseFixed(text) { return instant }
        return parseLocalized(text)
    }

    /// The fixed forms, byte by byte.
    private static func parseFixed(_ text: ByteSpan) -> Timestamp? {
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
        guard let offsetSeconds = zoneOffset(text.slice(zoneStart..<text.count)) else { return nil }
        return instant(fields, offsetSeconds: offsetSeconds)
    }

    /// The instant of local `fields` at `offsetSeconds` east of UTC, `nil` when they name no real time.
    private static func instant(
        _ fields: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int), offsetSeconds: Int
    ) -> Timestamp? {
        guard (1...12).contains(fields.month),
            (1...CivilCalendar.daysInMonth(year: fields.year, month: fields.month)).contains(fields.day),
            (0...23).contains(fields.hour), (0...59).contains(fields.minute), (0...59).contains(fields.second)
        else { return nil }
        let days = Int64(CivilCalendar.dayNumber(year: fields.year, month: fields.month, day: fields.day))
        let local = days * 86_400 + Int64(fields.hour * 3600 + fields.minute * 60 + fields.second)
        return (local - Int64(offsetSeconds)) * Micros.second
    }

    /// `yyyy-M-d h:mm:ss[ marker] zone` after mapping other digits to ASCII and no-break spaces to spaces: an hour
    /// of one or two digits, a 12-hour clock when an AM or PM marker follows the seconds (`AM`, `pm`, `a.m.`).
    /// One separator between the parts, as in the fixed forms.
    static func parseLocalized(_ text: ByteSpan) -> Timestamp? {
        guard text.count <= 96 else { return nil }
        var scalars: [Character] = []
        for scalar in String(decoding: text, as: UTF8.self).unicodeScalars {
            switch scalar.value {
            case 0x00A0, 0x202F, 0x2009: scalars.append(" ")
            default:
                if let digit = localizedDigit(scalar) {
                    scalars.append(Character(String(digit)))
                } else {
                    scalars.append(Character(scalar))
                }
            }
        }
        let parts = String(scalars).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 4 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        let time = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard date.count == 3, date[0].count == 4, time.count == 3, time[0].count <= 2, time[1].count == 2,
            time[2].count == 2, let year = Int(date[0]), let month = Int(date[1]), let day = Int(date[2]),
            date[1].count <= 2, date[2].count <= 2, var hour = Int(time[0]), let minute = Int(time[1]),
            let second = Int(time[2]), [date[0], date[1], date[2], time[0], time[1], time[2]].allSatisfy(isDigits)
        else { return nil }
        if parts.count == 4 {
            let marker = parts[2].lowercased().replacingOccurrences(of: ".", with: "")
            guard (1...12).contains(hour), marker == "am" || marker == "pm" else { return nil }
            hour = hour % 12 + (marker == "pm" ? 12 : 0)
        }
        let zone = Array(parts[parts.count - 1].utf8)
        guard let offsetSeconds = zone.withUnsafeBufferPointer(zoneOffset) else { return nil }
        return instant((year, month, day, hour, minute, second), offsetSeconds: offsetSeconds)
    }

    /// The value of a decimal digit of another script (Arabic-Indic, Persian, Devanagari, full-width), `nil` for
    /// anything else.
    private static func localizedDigit(_ scalar: Unicode.Scalar) -> UInt32? {
        for zero: UInt32 in [0x0660, 0x06F0, 0x0966, 0xFF10] where (zero...zero + 9).contains(scalar.value) {
            return scalar.value - zero
        }
        return nil
    }

    /// Whether `text` is all ASCII digits (and not empty).
    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= ASCII.zero && $0 <= ASCII.zero + 9 }
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
