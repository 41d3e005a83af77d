/// Parses decimal numbers as exports write them: `172`, `0.97`, `-3.5`, `1.2e-05`.
///
/// Short numbers take an exact fast path (Clinger: an integer mantissa below 2^53 scaled by at most 10^22 is
/// rounded once); longer ones go to the standard library's correctly rounded parser. Hex floats, `inf`, `nan`,
/// spaces and empty text are not numbers here.
enum DecimalParser {
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// The value of `text`, or `nil` unless all of it is `[+-]digits[.digits][(e|E)[+-]digits]` (digits may
    /// stand on only one side of the point).
    static func parse(_ text: ByteSpan) -> Double? {
        let n = text.count
        var i = 0
        var negative = false
        if i < n, text[i] == ASCII.minus || text[i] == ASCII.plus {
            negative = text[i] == ASCII.minus
            i += 1
        }
        var mantissa: UInt64 = 0
        var significant = 0
        var scale = 0
        var inexact = false
        var sawDigit = false
        while i < n, ASCII.isDigit(text[i]) {
            let digit = UInt64(text[i] - ASCII.zero)
            sawDigit = true
            if significant < 19 {
                if mantissa != 0 || digit != 0 {
                    mantissa = mantissa * 10 + digit
                    significant += 1
                }
            } else {
                scale += 1
                if digit != 0 { inexact = true }
            }
            i += 1
        }
        if i < n, text[i] == ASCII.dot {
            i += 1
            while i < n, ASCII.isDigit(text[i]) {
                let digit = UInt64(text[i] - ASCII.zero)
                sawDigit = true
                if significant < 19 {
                    if mantissa != 0 || digit != 0 {
                        mantissa = mantissa * 10 + digit
                        significant += 1
                    }
                    scale -= 1
                } else if digit != 0 {
                    inexact = true
                }
                i += 1
            }
        }
        guard sawDigit else { return nil }
        if i < n, text[i] == ASCII.lowerE || text[i] == ASCII.upperE {
            i += 1
            var exponentNegative = false
            if i < n, text[i] == ASCII.minus || text[i] == ASCII.plus {
                exponentNegative = text[i] == ASCII.minus
                i += 1
            }
            guard i < n else { return nil }
            var exponent = 0
            while i < n, ASCII.isDigit(text[i]) {
                exponent = min(exponent * 10 + Int(text[i] - ASCII.zero), 100_000)
                i += 1
            }
            scale += exponentNegative ? -exponent : exponent
        }
        guard i == n else { return nil }
        if mantissa == 0 { return negative ? -0.0 : 0.0 }
        let value: Double
        if !inexact, mantissa <= 1 << 53, (-22...22).contains(scale) {
            let m = Double(mantissa)
            value = scale >= 0 ? m * powersOfTen[scale] : m / powersOfTen[-scale]
        } else {
            // Rare: many digits or a large exponent. The grammar is checked, so strtod sees a plain decimal.
            guard let parsed = Double(String(decoding: text, as: UTF8.self)) else { return nil }
            return parsed
        }
        return negative ? -value : value
    }
}
