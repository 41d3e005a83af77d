/// Number formatting shared by every output format.
public enum NumberFormat {
    /// The shortest text that reads back as the same `Double`: `37` (not `37.0`), `1609.344`, `1e-06`.
    ///
    /// Integral values up to 2⁵³ (where every integer is exact) print without a fraction; NaN and infinities
    /// print as `nan`, `inf`, `-inf`.
    public static func shortest(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        if value == value.rounded(.towardZero), abs(value) <= 9_007_199_254_740_992 { return String(Int64(value)) }
        return value.description
    }
}
