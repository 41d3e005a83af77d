import Foundation

/// HealthKit's date predicate (HEALTHKIT.md §4): optional bounds and the strict-start / strict-end options.
///
/// | options         | start bound S  | end bound E               |
/// |-----------------|----------------|---------------------------|
/// | none            | `end >= S`     | `start < E`               |
/// | strictStartDate | `start >= S`   | `start < E`               |
/// | strictEndDate   | `end >= S`     | `end < E` and `start < E` |
/// | both            | `start >= S`   | `end < E` and `start < E` |
public struct DatePredicate: Hashable, Sendable {
    /// The start bound S; `nil` leaves the range open before.
    public var start: Timestamp?
    /// The end bound E (exclusive); `nil` leaves the range open after.
    public var end: Timestamp?
    /// HealthKit `.strictStartDate`: the sample must start at or after S.
    public var strictStartDate: Bool
    /// HealthKit `.strictEndDate`: the sample must end before E.
    public var strictEndDate: Bool

    /// A predicate with optional bounds and options (none by default).
    public init(
        start: Timestamp? = nil, end: Timestamp? = nil, strictStartDate: Bool = false, strictEndDate: Bool = false
    ) {
        self.start = start
        self.end = end
        self.strictStartDate = strictStartDate
        self.strictEndDate = strictEndDate
    }

    /// Matches every sample.
    public static let all = DatePredicate()

    /// Whether a sample spanning `[sampleStart, sampleEnd]` matches (the §4 table).
    @inlinable
    public func matches(start sampleStart: Timestamp, end sampleEnd: Timestamp) -> Bool {
        if let s = start {
            if strictStartDate ? sampleStart < s : sampleEnd < s { return false }
        }
        if let e = end {
            if sampleStart >= e { return false }
            if strictEndDate, sampleEnd >= e { return false }
        }
        return true
    }

    /// Throws ``ErrorCode/invalidPredicate`` when the end bound lies before the start bound.
    public func validate() throws {
        if let s = start, let e = end, e < s {
            throw HealthError(.invalidPredicate, "the predicate ends (\(e)) before it starts (\(s))")
        }
    }
}

/// A full sample predicate: dates, and optionally sources and UUIDs (HEALTHKIT.md §4).
public struct SampleFilter: Hashable, Sendable {
    /// The date range and its options.
    public var date: DatePredicate
    /// Source names or bundle identifiers; `nil` matches every source.
    public var sources: Set<String>?
    /// `nil` matches every UUID.
    public var uuids: Set<UUID>?
    /// Only samples written by this client identity (its numeric writer id); `nil` matches every writer. Set by
    /// the server's authorization, never taken from the wire: not part of the public API.
    package var writer: UInt32?

    /// A predicate with optional bounds and options (none by default).
    public init(date: DatePredicate = .all, sources: Set<String>? = nil, uuids: Set<UUID>? = nil) {
        self.init(date: date, sources: sources, uuids: uuids, writer: nil)
    }

    /// A predicate restricted to one writer (the server's authorization and its tests).
    package init(date: DatePredicate = .all, sources: Set<String>? = nil, uuids: Set<UUID>? = nil, writer: UInt32?) {
        self.date = date
        self.sources = sources
        self.uuids = uuids
        self.writer = writer
    }

    /// Matches every sample.
    public static let all = SampleFilter()

    /// Whether a source passes the source filter (by name or bundle identifier).
    public func matches(source: SourceInfo) -> Bool {
        guard let sources else { return true }
        return sources.contains(source.name)
            || (!source.bundleIdentifier.isEmpty && sources.contains(source.bundleIdentifier))
    }
}

extension SampleFilter: CustomReflectable {
    /// The fields, leaving out ``writer`` when unset: it is server-side only, never part of a wire value, so
    /// printed wire messages (and the golden vectors in Protocol/vectors) stay as they were.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [("date", date), ("sources", sources as Any), ("uuids", uuids as Any)]
        if let writer { children.append(("writer", writer)) }
        return Mirror(self, children: children, displayStyle: .struct)
    }
}

/// Sort order of a sample query.
public enum SampleSort: UInt8, Sendable, CaseIterable {
    case startAscending = 0
    case startDescending = 1
    case endAscending = 2
    case endDescending = 3
}
