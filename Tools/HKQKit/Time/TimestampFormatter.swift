import Foundation
import HealthModel
import Synchronization

/// Prints instants in a time zone: `2024-03-10 08:00:00 -05:00` for people, `2024-03-10T08:00:00-05:00` for
/// programs. Fractional seconds appear only when present (`08:00:00.25`).
///
/// Offsets come from a ``ZoneOffsetWalker`` shared by the copies of one formatter, so a listing asks Foundation
/// about twice per time zone transition instead of once per instant (microseconds each).
public struct TimestampFormatter: Sendable {
    /// The zone times are shown in; each instant gets the offset in force at that instant.
    public let timeZone: TimeZone
    private let offsets: Mutex<ZoneOffsetWalker>.Box

    /// A formatter for `timeZone`.
    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        offsets = Mutex.Box(ZoneOffsetWalker(zone: timeZone))
    }

    /// The zone's offset from UTC at `instant`, in seconds east.
    public func offsetSeconds(at instant: Timestamp) -> Int {
        Int(offsets.mutex.withLock { $0.offset(at: instant) } / Micros.second)
    }

    /// `2024-03-10 08:00:00 -05:00`: tables and messages.
    public func display(_ instant: Timestamp) -> String { render(instant, separator: " ", offsetSeparator: " ") }

    /// `2024-03-10T08:00:00-05:00`: JSON and CSV.
    public func iso8601(_ instant: Timestamp) -> String { render(instant, separator: "T", offsetSeparator: "") }

    /// The instant as a cell: ``display(_:)`` in tables, ``iso8601(_:)`` in JSON and CSV.
    public func cell(_ instant: Timestamp, format: OutputFormat) -> JSONValue {
        .string(format == .table ? display(instant) : iso8601(instant))
    }

    func render(_ instant: Timestamp, separator: String, offsetSeparator: String) -> String {
        let offset = offsetSeconds(at: instant)
        let civil = CivilTime(timestamp: instant, offsetSeconds: offset)
        var text = Self.pad(civil.year, 4) + "-" + Self.pad(civil.month, 2) + "-" + Self.pad(civil.day, 2)
        text += separator + Self.pad(civil.hour, 2) + ":" + Self.pad(civil.minute, 2) + ":" + Self.pad(civil.second, 2)
        if civil.microsecond != 0 {
            var fraction = Self.pad(civil.microsecond, 6)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        let magnitude = abs(offset) / 60
        text +=
            offsetSeparator + (offset < 0 ? "-" : "+") + Self.pad(magnitude / 60, 2) + ":" + Self.pad(magnitude % 60, 2)
        return text
    }

    /// `value` in decimal, zero-padded on the left to `width` digits (a sign, if any, comes first).
    static func pad(_ value: Int, _ width: Int) -> String {
        guard value >= 0 else {
            let digits = String(value.magnitude)
            return "-" + String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        // Written straight into the string's storage: listings format a few fields per row.
        var digitCount = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digitCount += 1
        }
        let length = max(width, digitCount)
        return String(unsafeUninitializedCapacity: length) { buffer in
            var rest = value
            for index in stride(from: length - 1, through: 0, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            return length
        }
    }
}

extension Mutex {
    /// A mutex on the heap, so that copies of the value holding it share one lock and one state.
    final class Box: Sendable {
        let mutex: Mutex<Value>
        init(_ value: sending Value) { mutex = Mutex(value) }
    }
}
