/// How instants are written in JSON and CSV: the global `--time-format` option. Tables always show local
/// wall-clock text.
public enum TimeFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// RFC 3339 with the offset of the query's zone at that instant, `Z` for a zero offset:
    /// `2026-11-01T01:00:00-04:00`, `2026-11-01T06:00:00Z`. The default.
    case rfc3339
    /// Milliseconds since 1970-01-01T00:00:00Z, an integer (floored).
    case epochMilliseconds = "epoch-ms"
    /// Microseconds since 1970-01-01T00:00:00Z, an integer (exact: hkd's own resolution).
    case epochMicroseconds = "epoch-us"

    /// The option value, e.g. `epoch-ms`.
    public var description: String { rawValue }
}
