/// An instant: whole microseconds since 1970-01-01T00:00:00Z (UTC, no leap seconds).
///
/// Time zones appear only where a calendar is needed (collection buckets, "today").
public typealias Timestamp = Int64

/// Microseconds in common units, for readable arithmetic on ``Timestamp``.
public enum Micros {
    /// One second.
    public static let second: Int64 = 1_000_000
    /// One minute.
    public static let minute: Int64 = 60 * second
    /// One hour.
    public static let hour: Int64 = 60 * minute
    /// One day of 24 hours (not a calendar day).
    public static let day: Int64 = 24 * hour
}
