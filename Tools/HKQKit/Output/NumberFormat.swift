import Foundation

/// Number formatting shared by every output format.
public enum NumberFormat {
    /// The shortest text that reads back as the same `Double`: `37` (not `37.0`), `1609.344`, `1e-06`.
    ///
    /// Integral values up to 2⁵³ (where every integer is exact) print without a fraction; NaN and infinities
    /// print as `nan`, `inf`, `-inf`. JSON output uses this form, so programs get the exact value.
    public static func shortest(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        if let integer = shortestInteger(value) { return String(integer) }
        return value.description
    }

    /// `value` as an integer when ``shortest(_:)`` prints it as one: integral and at most 2⁵³ in magnitude.
    @inline(__always)
    static func shortestInteger(_ value: Double) -> Int64? {
        value == value.rounded(.towardZero) && abs(value) <= 9_007_199_254_740_992 ? Int64(value) : nil
    }

    /// The form for people (tables, CSV, `units convert`): the value rounded to 15 significant digits, then
    /// ``shortest(_:)``. Hides the last-bit noise of unit conversion (1 ft → `12`, not `12.000000000000002`).
    public static func display(_ value: Double) -> String {
        guard value.isFinite, value != 0 else { return shortest(value) }
        // Whole numbers below 10¹⁵ have at most 15 digits: rounding leaves them as they are.
        if value == value.rounded(.towardZero), abs(value) < 1e15 { return String(Int64(value)) }
        return shortest(roundedTo15Digits(value))
    }

    /// `value` rounded to 15 significant digits, through C's `%.15g` (Foundation's `String(format:)` costs
    /// microseconds a call, which a 100,000-row listing feels).
    static func roundedTo15Digits(_ value: Double) -> Double {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 32) { buffer in
            let written = withVaList([value]) { vsnprintf(buffer.baseAddress, 32, "%.15g", $0) }
            guard written > 0, written < 32 else { return value }
            return strtod(buffer.baseAddress!, nil)
        }
    }

    /// A computed figure for people: six significant digits, but never fewer than the integer part has, and
    /// trailing zeros dropped (`8050.12` for 8050.123456789, `0.7`, `123457` for 123456.7). Tables only.
    public static func rounded(_ value: Double) -> String {
        guard value.isFinite, value != 0 else { return shortest(value) }
        let magnitude = Int(log10(abs(value)).rounded(.down))
        let decimals = min(6, max(0, 5 - magnitude))
        let text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let written = withVaList([decimals, value]) { vsnprintf(buffer.baseAddress, 64, "%.*f", $0) }
            guard written > 0, written < 64 else { return display(value) }
            return String(cString: buffer.baseAddress!)
        }
        guard text.contains(".") else { return text == "-0" ? "0" : text }
        var trimmed = Substring(text)
        while trimmed.hasSuffix("0") { trimmed = trimmed.dropLast() }
        if trimmed.hasSuffix(".") { trimmed = trimmed.dropLast() }
        return trimmed == "-0" ? "0" : String(trimmed)
    }
}
