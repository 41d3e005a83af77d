/// ISO 8601 date-times as hkq reads them: `2024-03-10T08:00:00-05:00`, `…Z`, `…08:00:00.250+05:30`,
/// `…+0530`, a space instead of `T`, seconds optional; or a bare date `2024-03-10`.
///
/// A hand-written parser: strict about ranges, no Foundation formatter, fast enough for millions of CSV rows.
public enum ISO8601Text {
    /// A parsed text: the civil time and, when the text had one, its UTC offset in seconds.
    public struct Parsed: Hashable, Sendable {
        /// The date and wall-clock time written.
        public var civil: CivilTime
        /// Seconds east of UTC (`Z` is 0); `nil` when the text has no offset.
        public var offsetSeconds: Int?
        /// Whether the text had a time of day (not a bare date).
        public var hasTime: Bool
    }

    /// Parses `text`; `nil` when it is not an ISO 8601 date or date-time, or a field is out of range.
    public static func parse(_ text: some StringProtocol) -> Parsed? {
        var scanner = Scanner(bytes: Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take(UInt8(ascii: "-")), let month = scanner.digits(2),
            scanner.take(UInt8(ascii: "-")), let day = scanner.digits(2)
        else { return nil }
        var civil = CivilTime(year: year, month: month, day: day)
        if scanner.atEnd { return civil.isValid ? Parsed(civil: civil, offsetSeconds: nil, hasTime: false) : nil }
        guard scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")),
            let hour = scanner.digits(2), scanner.take(UInt8(ascii: ":")), let minute = scanner.digits(2)
        else { return nil }
        civil.hour = hour
        civil.minute = minute
        if scanner.take(UInt8(ascii: ":")) {
            guard let second = scanner.digits(2) else { return nil }
            civil.second = second
            if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
                guard let micros = scanner.fraction() else { return nil }
                civil.microsecond = micros
            }
        }
        var offset: Int?
        if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
            offset = 0
        } else if let sign = scanner.sign() {
            guard let hours = scanner.digits(2), hours <= 23 else { return nil }
            _ = scanner.take(UInt8(ascii: ":"))
            var minutes = 0
            if !scanner.atEnd {
                guard let value = scanner.digits(2), value <= 59 else { return nil }
                minutes = value
            }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard scanner.atEnd, civil.isValid else { return nil }
        return Parsed(civil: civil, offsetSeconds: offset, hasTime: true)
    }

    /// The instant of a date-time that carries a UTC offset; `nil` for anything else (bare dates included).
    public static func timestamp(_ text: some StringProtocol) -> Int64? {
        guard let parsed = parse(text), let offset = parsed.offsetSeconds else { return nil }
        return parsed.civil.timestamp(offsetSeconds: offset)
    }

    /// A cursor over ASCII bytes.
    struct Scanner {
        let bytes: [UInt8]
        var position = 0

        var atEnd: Bool { position == bytes.count }

        /// Consumes `byte` when it comes next.
        mutating func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// Exactly `count` decimal digits as a number.
        mutating func digits(_ count: Int) -> Int? {
            guard position + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<position + count] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            position += count
            return value
        }

        /// One to nine fraction digits as microseconds (digits past the sixth are truncated).
        mutating func fraction() -> Int? {
            var micros = 0
            var count = 0
            while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 {
                if count < 6 { micros = micros * 10 + Int(bytes[position] - 0x30) }
                count += 1
                position += 1
            }
            guard (1...9).contains(count) else { return nil }
            for _ in min(count, 6)..<6 { micros *= 10 }
            return micros
        }

        /// `+1` or `-1` for a leading `+` or `-`; `nil` (nothing consumed) otherwise.
        mutating func sign() -> Int? {
            if take(UInt8(ascii: "+")) { return 1 }
            if take(UInt8(ascii: "-")) { return -1 }
            return nil
        }
    }
}
