import Foundation
import HealthModel
import Synchronization

/// Prints instants in a time zone: `2024-03-10 08:00:00 -05:00` for people, RFC 3339
/// `2024-03-10T08:00:00-05:00` (`Z` for a zero offset) or epoch integers for programs, per ``timeFormat``.
/// Fractional seconds appear only when present (`08:00:00.25`).
///
/// Offsets come from a ``ZoneOffsetWalker`` shared by the copies of one formatter, so a listing asks Foundation
/// about twice per time zone transition instead of once per instant (microseconds each).
public struct TimestampFormatter: Sendable {
    /// The zone times are shown in; each instant gets the offset in force at that instant.
    public let timeZone: TimeZone
    /// How ``cell(_:format:)`` writes instants in JSON and CSV.
    public let timeFormat: TimeFormat
    private let offsets: Mutex<ZoneOffsetWalker>.Box

    /// A formatter for `timeZone`, writing JSON and CSV instants as `timeFormat`.
    public init(timeZone: TimeZone, timeFormat: TimeFormat = .rfc3339) {
        self.timeZone = timeZone
        self.timeFormat = timeFormat
        offsets = Mutex.Box(ZoneOffsetWalker(zone: timeZone))
    }

    /// Whether the zone's clocks show the wall time of `instant` twice (a fall-back overlap), so a label
    /// without its offset would be ambiguous.
    public func isRepeatedWallTime(_ instant: Timestamp) -> Bool {
        offsets.mutex.withLock { walker in
            let local = instant + walker.offset(at: instant)
            return walker.instant(atLocal: local, repeated: .first) != walker.instant(atLocal: local, repeated: .last)
        }
    }

    /// The zone's offset from UTC at `instant`, in seconds east.
    public func offsetSeconds(at instant: Timestamp) -> Int {
        Int(offsets.mutex.withLock { $0.offset(at: instant) } / Micros.second)
    }

    /// `2024-03-10 08:00:00 -05:00`: tables and messages.
    public func display(_ instant: Timestamp) -> String { render(instant, separator: " ", offsetSeparator: " ") }

    /// `2024-03-10T08:00:00-05:00`, `2024-03-10T13:00:00Z`: RFC 3339 (`Z` whenever the offset is zero, so
    /// `jq fromdateiso8601` reads it), for JSON and CSV.
    public func iso8601(_ instant: Timestamp) -> String {
        render(instant, separator: "T", offsetSeparator: "", zeroAsZ: true)
    }

    /// The instant as a cell: ``display(_:)`` in tables; in JSON and CSV per ``timeFormat`` (an RFC 3339
    /// string or an integer).
    public func cell(_ instant: Timestamp, format: OutputFormat) -> JSONValue {
        if format == .table || format == .chart { return .string(display(instant)) }
        return machineCell(instant)
    }

    /// The instant per ``timeFormat``, whatever the output format (NDJSON streams, CSV).
    public func machineCell(_ instant: Timestamp) -> JSONValue {
        switch timeFormat {
        case .rfc3339: .string(iso8601(instant))
        case .epochMilliseconds: .integer(instant.floorDivided(by: 1000).quotient)
        case .epochMicroseconds: .integer(instant)
        }
    }

    /// The wall-clock time of `instant` in ``timeZone``.
    public func civil(_ instant: Timestamp) -> CivilTime {
        CivilTime(timestamp: instant, offsetSeconds: offsetSeconds(at: instant))
    }

    /// `-05:00`, `+05:45`, `+00:00`: the offset at `instant`.
    public func offsetText(_ instant: Timestamp) -> String { Self.offsetText(seconds: offsetSeconds(at: instant)) }

    /// `-05:00` for `-18000`: an offset in seconds east as `±HH:MM`.
    static func offsetText(seconds offset: Int) -> String {
        String(unsafeUninitializedCapacity: 24) { buffer in
            var text = DigitWriter(buffer: buffer)
            text.offset(offset)
            return text.count
        }
    }

    /// ``machineCell(_:)`` written straight into a CSV line (listings of thousands of rows); returns where its
    /// bytes lie.
    @discardableResult
    func writeMachineField(_ instant: Timestamp, to csv: inout CSVWriter) -> Range<Int> {
        guard timeFormat == .rfc3339 else { return csv.field(machineCell(instant)) }
        return csv.unquotedField(capacity: Self.renderCapacity) { buffer in
            write(instant, separator: "T", offsetSeparator: "", zeroAsZ: true, into: buffer)
        }
    }

    /// ``machineCell(_:)`` written straight into JSON (listings of thousands of objects); returns where its bytes
    /// lie.
    @discardableResult
    func writeMachineValue(_ instant: Timestamp, to json: inout JSONWriter) -> Range<Int> {
        guard timeFormat == .rfc3339 else { return json.value(machineCell(instant)) }
        return json.plainString(capacity: Self.renderCapacity) { buffer in
            write(instant, separator: "T", offsetSeparator: "", zeroAsZ: true, into: buffer)
        }
    }

    /// The most bytes ``write(_:separator:offsetSeparator:zeroAsZ:into:)`` writes with one-byte separators: years
    /// take at most 7 bytes with a sign (an Int64 of microseconds spans ±292,000 years), the rest at most 36.
    private static let renderCapacity = 48

    func render(_ instant: Timestamp, separator: String, offsetSeparator: String, zeroAsZ: Bool = false) -> String {
        // Written into the string's storage in one pass (listings format two instants a row; concatenating a
        // dozen small strings per instant was most of a long listing's time).
        let capacity = Self.renderCapacity + separator.utf8.count + offsetSeparator.utf8.count
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            write(instant, separator: separator, offsetSeparator: offsetSeparator, zeroAsZ: zeroAsZ, into: buffer)
        }
    }

    /// Writes `instant` as ``render(_:separator:offsetSeparator:zeroAsZ:)`` shows it into `buffer` (room for
    /// ``renderCapacity`` bytes and the separators) and returns how many bytes it wrote.
    private func write(
        _ instant: Timestamp, separator: String, offsetSeparator: String, zeroAsZ: Bool,
        into buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        let offset = offsetSeconds(at: instant)
        let civil = CivilTime(timestamp: instant, offsetSeconds: offset)
        var text = DigitWriter(buffer: buffer)
        text.padded(civil.year, 4)
        text.byte(UInt8(ascii: "-"))
        text.padded(civil.month, 2)
        text.byte(UInt8(ascii: "-"))
        text.padded(civil.day, 2)
        text.text(separator)
        text.padded(civil.hour, 2)
        text.byte(UInt8(ascii: ":"))
        text.padded(civil.minute, 2)
        text.byte(UInt8(ascii: ":"))
        text.padded(civil.second, 2)
        if civil.microsecond != 0 {
            var fraction = civil.microsecond
            var digits = 6
            while fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            text.byte(UInt8(ascii: "."))
            text.padded(fraction, digits)
        }
        if zeroAsZ, offset == 0 {
            text.byte(UInt8(ascii: "Z"))
        } else {
            text.text(offsetSeparator)
            text.offset(offset)
        }
        return text.count
    }

    /// `value` in decimal, zero-padded on the left to `width` digits (a sign, if any, comes first).
    static func pad(_ value: Int, _ width: Int) -> String {
        // Written straight into the string's storage: listings format a few fields per row. An Int has at most 19
        // digits and a sign.
        String(unsafeUninitializedCapacity: max(width, 19) + 1) { buffer in
            var text = DigitWriter(buffer: buffer)
            text.padded(value, width)
            return text.count
        }
    }
}

/// Appends ASCII into a buffer sized beforehand: the digits of instants, offsets and padded numbers.
private struct DigitWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func byte(_ byte: UInt8) {
        buffer[count] = byte
        count += 1
    }

    mutating func text(_ text: String) {
        for byte in text.utf8 { self.byte(byte) }
    }

    /// `value` in decimal, zero-padded on the left to `width` digits, a sign first.
    mutating func padded(_ value: Int, _ width: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        var digitCount = 1
        var rest = value.magnitude
        while rest >= 10 {
            rest /= 10
            digitCount += 1
        }
        let length = max(width, digitCount)
        rest = value.magnitude
        for index in stride(from: count + length - 1, through: count, by: -1) {
            buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        count += length
    }

    /// An offset in seconds east as `±HH:MM`.
    mutating func offset(_ seconds: Int) {
        let minutes = abs(seconds) / 60
        byte(UInt8(ascii: seconds < 0 ? "-" : "+"))
        padded(minutes / 60, 2)
        byte(UInt8(ascii: ":"))
        padded(minutes % 60, 2)
    }
}

extension Mutex {
    /// A mutex on the heap, so that copies of the value holding it share one lock and one state.
    final class Box: Sendable {
        let mutex: Mutex<Value>
        init(_ value: sending Value) { mutex = Mutex(value) }
    }
}
