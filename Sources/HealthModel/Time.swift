/// An instant: whole microseconds since 1970-01-01T00:00:00Z (UTC, no leap seconds).
///
/// Time zones appear only where a calendar is needed (collection buckets, "today").
public typealias Timestamp = Int64

/// The instants hkd accepts, stores and computes with: years 0001 through 9999 UTC.
///
/// Every stored start and end lies inside, so the difference of two instants (a duration) and an instant plus
/// such a duration always fit in `Int64`: engine arithmetic on stored times cannot overflow. Requests naming an
/// instant outside are refused (``ErrorCode/invalidSample`` for samples, ``ErrorCode/invalidArgument`` for
/// calendar anchors and ranges).
public enum SupportedInstants {
    /// 0001-01-01T00:00:00Z ... 9999-12-31T23:59:59.999999Z, in microseconds since 1970.
    public static let range: ClosedRange<Timestamp> = -62_135_596_800_000_000...253_402_300_799_999_999
    /// How errors name the range.
    public static let description = "years 0001–9999"

    /// Whether `instant` lies inside ``range``.
    @inlinable public static func contains(_ instant: Timestamp) -> Bool { range.contains(instant) }
}

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

/// The version of hkd, hkq and the client library, which are released together.
public enum ProjectVersion {
    /// `major.minor.patch`.
    public static let current = "0.1.0"
}
