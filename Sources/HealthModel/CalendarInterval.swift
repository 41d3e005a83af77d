import Foundation

/// The interval components of a statistics collection (HEALTHKIT.md §7): a positive count of one calendar unit.
///
/// Seconds, minutes and hours are fixed elapsed time; days and longer follow the local calendar of the
/// collection's time zone (a day bucket is 23 or 25 hours long on DST days).
public struct CalendarInterval: Hashable, Sendable, CustomStringConvertible {
    public enum Unit: UInt8, Sendable, CaseIterable {
        case second = 0, minute = 1, hour = 2, day = 3, week = 4, month = 5, year = 6

        /// The short suffix used by `hkq`: `s`, `m`, `h`, `d`, `w`, `mo`, `y`.
        public var suffix: String {
            switch self {
            case .second: "s"
            case .minute: "m"
            case .hour: "h"
            case .day: "d"
            case .week: "w"
            case .month: "mo"
            case .year: "y"
            }
        }
    }

    public var unit: Unit
    public var count: Int

    public init(_ count: Int, _ unit: Unit) {
        self.count = count
        self.unit = unit
    }

    /// Largest count accepted for any unit.
    public static let maxCount = 100_000

    public var description: String { "\(count)\(unit.suffix)" }

    /// Parses `15m`, `1h`, `1d`, `1w`, `1mo`, `1y` (and `30s`).
    public init(parsing text: String) throws {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let suffix = text.dropFirst(digits.count)
        guard let count = Int(digits), let unit = Unit.allCases.first(where: { $0.suffix == suffix }) else {
            throw HealthError(
                .invalidInterval,
                "cannot parse interval \"\(text)\": write a count and one of s, m, h, d, w, mo, y (e.g. 1d)")
        }
        self.init(count, unit)
        try validate()
    }

    /// About how long one bucket lasts, in microseconds: months as 31 days, years as 366, days as 24 hours (a
    /// daylight-saving day is an hour shorter or longer). For sizing ranges and margins, never for boundaries.
    public var nominalLength: Int64 {
        let unit: Int64 =
            switch self.unit {
            case .second: Micros.second
            case .minute: Micros.minute
            case .hour: Micros.hour
            case .day: Micros.day
            case .week: 7 * Micros.day
            case .month: 31 * Micros.day
            case .year: 366 * Micros.day
            }
        return unit * Int64(count)
    }

    /// Throws ``ErrorCode/invalidInterval`` unless the count is positive and at most ``maxCount``.
    public func validate() throws {
        guard count > 0, count <= CalendarInterval.maxCount else {
            throw HealthError(
                .invalidInterval, "interval count \(count) must be between 1 and \(CalendarInterval.maxCount)")
        }
    }
}

/// A sample removed since an anchor (HEALTHKIT.md §9): only its identity survives.
public struct DeletedObject: Hashable, Sendable {
    public var uuid: UUID
    /// `HKMetadataKeySyncIdentifier` of the deleted sample, empty when it had none.
    public var syncIdentifier: String
    public var syncVersion: Int64

    public init(uuid: UUID, syncIdentifier: String = "", syncVersion: Int64 = 0) {
        self.uuid = uuid
        self.syncIdentifier = syncIdentifier
        self.syncVersion = syncVersion
    }
}

/// HealthKit's authorization status for sharing (writing) a type (HEALTHKIT.md §10). Read access is never revealed.
public enum AuthorizationState: UInt8, Sendable, CaseIterable {
    case notDetermined = 0
    case sharingDenied = 1
    case sharingAuthorized = 2
}
