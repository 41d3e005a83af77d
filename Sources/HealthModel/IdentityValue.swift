import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The value a sample's content identity is computed on (Protocol/STORAGE.md, *Content identity*): the value in
/// its type's canonical unit, rounded to ``significantDigits`` significant decimal digits.
///
/// So `1 km` and `1000 m`, or `0.621371192 mi` and `1 km`, name one sample, whatever unit a file was written in.
/// Why 9 digits: Apple's export prints 6 significant digits in the person's display unit, and the factors
/// between display units of one dimension (mi/km 1.609, kcal/kJ 4.184, lb/kg 2.205, ft/m 3.281) are below 10,
/// so two values that differ in their 6th printed digit in any unit still differ in their 7th canonical digit:
/// 9 keeps them apart with two digits to spare. Conversions in binary floating point err by about 1e-16
/// relative, so a value converted from another unit lands on the same 9-digit decimal except within 1e-7 of a
/// rounding boundary (about one value in ten million).
public enum IdentityValue {
    /// Significant decimal digits kept.
    public static let significantDigits = 9

    /// `value` written in `unit` as the canonical, rounded value of `type` (`nil` when it does not convert to a
    /// finite number). Percent types take the fraction as written whatever the dimensionless unit (HEALTHKIT.md
    /// §2).
    public static func canonical(_ value: Double, unit: HealthUnit, type: QuantityType) -> Double? {
        let converted: Double?
        if type.canonicalUnit.dimension == .none, unit.dimension == .none {
            converted = type.canonicalUnit.symbol == "%" ? value : try? unit.convert(value, to: type.canonicalUnit)
        } else {
            converted = try? unit.convert(value, to: type.canonicalUnit)
        }
        guard let converted, converted.isFinite else { return nil }
        return rounded(converted)
    }

    /// `value` rounded to ``significantDigits`` significant decimal digits (as `printf("%.8e")` rounds the
    /// exact binary value), read back as the nearest double; zero of either sign is `+0`.
    public static func rounded(_ value: Double) -> Double {
        guard value.isFinite, value != 0 else { return value == 0 ? 0 : value }
        return scaledRounding(value) ?? printedRounding(value)
    }

    /// Powers of ten that are exact doubles (10^0 … 10^22).
    private static let exactPowersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    /// ``rounded(_:)`` by arithmetic, or `nil` where only printing is sure to agree with `printf`.
    ///
    /// With `k` chosen so that `x = |value| · 10^k` has 9 digits before the point, `x` is off by at most half an
    /// ulp (6·10^−8 below 10^9) since `10^k` is exact for `|k| ≤ 22`; so unless `x` lies within 10^−6 of a
    /// half, rounding it gives the same integer `r` as rounding the exact value. `r / 10^k` (or `r · 10^−k`) is
    /// then one correctly rounded operation on exact operands: the double nearest `r·10^−k`, which is what
    /// `strtod` returns for the printed digits. About 30 times faster than printing and parsing.
    static func scaledRounding(_ value: Double) -> Double? {
        let magnitude = abs(value)
        // The decimal exponent from the binary one (no log10): for magnitude in [2^e, 2^(e+1)), floor(log10) is
        // floor(e·log10 2) or one more, which the first pass of the loop corrects.
        var exponent = Int((Double(Int(magnitude.exponent)) * 0.301_029_995_663_981_2).rounded(.down))
        for _ in 0..<2 {
            let k = significantDigits - 1 - exponent
            guard abs(k) <= 22 else { return nil }
            let power = exactPowersOfTen[abs(k)]
            let x = k >= 0 ? magnitude * power : magnitude / power
            if x >= 1e9 {
                exponent += 1
                continue
            }
            if x < 1e8 {
                exponent -= 1
                continue
            }
            let fraction = x - x.rounded(.down)
            guard abs(fraction - 0.5) > 1e-6 else { return nil }
            let r = x.rounded(.toNearestOrAwayFromZero)
            let result = k >= 0 ? r / power : r * power
            return value < 0 ? -result : result
        }
        return nil
    }

    /// ``rounded(_:)`` by printing 9 digits and reading them back.
    static func printedRounding(_ value: Double) -> Double {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 40) { buffer in
            let base = buffer.baseAddress!
            _ = withVaList([value]) { vsnprintf(base, 40, "%.8e", $0) }
            return strtod(base, nil)
        }
    }
}

/// When two values that were rounded for printing name one measurement (Protocol/STORAGE.md, *Content identity*).
///
/// A value printed with `d` significant digits is off by at most half a unit in its `d`-th digit, which is at most
/// `5·10^−d` of itself whatever the unit, and its identity value (``IdentityValue``) by another `5·10^−9`. Two
/// values agree when they are no further apart than both errors together:
/// `|a − b| ≤ (5·10^−d + 5·10^−9) · (|a| + |b|)`. So `0.621371 mi` and `1 km` agree at 6 digits, and values that
/// differ in a digit the printing kept stay apart (about one part in 10^5 at 6 digits).
public enum RoundedValues {
    /// The digits a batch may say its values were rounded to.
    public static let digitRange = 1...17

    /// Whether `a` and `b`, each rounded to `digits` significant digits (in any units) and converted, may be one
    /// value.
    public static func agree(_ a: Double, _ b: Double, digits: Int) -> Bool {
        if a == b { return true }
        let relative = 5 * pow(10, -Double(digits)) + 5e-9
        return abs(a - b) <= relative * (abs(a) + abs(b))
    }
}
