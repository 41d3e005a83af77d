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

/// HealthKit's quantity predicate (`HKQuery.predicateForQuantitySamples(with:quantity:)`, HEALTHKIT.md §4) as an
/// interval of values: optional lower and upper bounds, each inclusive (`>=`, `<=`) or exclusive (`>`, `<`), in
/// ``unit`` (empty: the type's canonical unit). `== q` is both bounds at q, inclusive.
public struct ValueBounds: Hashable, Sendable {
    /// The lower bound; `nil` leaves the values open below.
    public var lower: Double?
    /// The upper bound; `nil` leaves the values open above.
    public var upper: Double?
    /// Whether a value equal to ``lower`` matches (`>=`), else `>`.
    public var lowerInclusive: Bool
    /// Whether a value equal to ``upper`` matches (`<=`), else `<`.
    public var upperInclusive: Bool
    /// The unit of both bounds; empty means the type's canonical unit.
    public var unit: String
    /// For a category type, the raw values a sample may have (HealthKit's
    /// `predicateForCategorySamples(with:value:)`, for a set of values); `nil` matches every value.
    public var categoryValues: Set<Int>?

    /// Bounds in `unit` (canonical when empty), inclusive unless stated.
    public init(
        lower: Double? = nil, upper: Double? = nil, lowerInclusive: Bool = true, upperInclusive: Bool = true,
        unit: String = "", categoryValues: Set<Int>? = nil
    ) {
        self.lower = lower
        self.upper = upper
        self.lowerInclusive = lowerInclusive
        self.upperInclusive = upperInclusive
        self.unit = unit
        self.categoryValues = categoryValues
    }

    /// A category value predicate: samples whose value is one of `values` (raw values of the type's enumeration).
    public static func category(_ values: Set<Int>) -> ValueBounds { ValueBounds(categoryValues: values) }

    /// Whether `value` (in the bounds' unit) lies within them.
    @inlinable
    public func matches(_ value: Double) -> Bool {
        if let lower, lowerInclusive ? value < lower : value <= lower { return false }
        if let upper, upperInclusive ? value > upper : value >= upper { return false }
        if let categoryValues {
            guard let raw = Int(exactly: value), categoryValues.contains(raw) else { return false }
        }
        return true
    }

    /// The same bounds in `type`'s canonical unit (``unit`` empty). Throws ``ErrorCode/invalidPredicate`` for a
    /// non-finite bound or a lower bound above the upper one, and the unit errors of ``HealthUnit`` and
    /// ``SampleRules/validate(unit:for:)`` for a unit that does not parse or fit the type.
    public func canonical(for type: QuantityType) throws -> ValueBounds {
        for bound in [lower, upper].compactMap({ $0 }) where !bound.isFinite {
            throw HealthError(.invalidPredicate, "the value bound \(bound) is not a finite number")
        }
        var result = self
        if let categoryValues {
            guard let enumeration = type.categoryValues else {
                throw HealthError(
                    .invalidPredicate,
                    "a category value predicate needs a category type, and \(type) is a quantity type")
            }
            if let bad = categoryValues.sorted().first(where: { enumeration.value(raw: $0) == nil }) {
                throw HealthError(
                    .invalidPredicate,
                    "\(bad) is not a value of category type \(type) (\(enumeration.enumeration): \(enumeration.listing))"
                )
            }
        }
        if !unit.isEmpty {
            let from = try type.unit(parsing: unit)
            result.lower = try lower.map { try from.convert($0, to: type.canonicalUnit) }
            result.upper = try upper.map { try from.convert($0, to: type.canonicalUnit) }
            result.unit = ""
        }
        if let low = result.lower, let high = result.upper, low > high {
            throw HealthError(.invalidPredicate, "the value bounds are empty: \(low) is above \(high)")
        }
        return result
    }
}

/// HealthKit's metadata predicate (`HKQuery.predicateForObjects(withMetadataKey:)` and
/// `predicateForObjects(withMetadataKey:allowedValues:)`, HEALTHKIT.md §4): a sample matches when its metadata has
/// ``key`` and, with ``allowedValues``, when the value there is one of them (a string or a number, compared
/// exactly).
public struct MetadataPredicate: Hashable, Sendable {
    /// The metadata key, e.g. `HKTimeZone`.
    public var key: String
    /// The values that match; `nil`: any value (the key is present).
    public var allowedValues: [MetadataValue]?

    /// A predicate on `key`, with or without allowed values.
    public init(key: String, allowedValues: [MetadataValue]? = nil) {
        self.key = key
        self.allowedValues = allowedValues
    }

    /// Whether a sample's `metadata` matches.
    public func matches(_ metadata: [String: MetadataValue]) -> Bool {
        guard let value = metadata[key] else { return false }
        guard let allowedValues else { return true }
        return allowedValues.contains(value)
    }
}

/// A full sample predicate: dates, and optionally sources, UUIDs, values and metadata (HEALTHKIT.md §4).
public struct SampleFilter: Hashable, Sendable {
    /// The date range and its options.
    public var date: DatePredicate
    /// Source names or bundle identifiers; `nil` matches every source.
    public var sources: Set<String>?
    /// `nil` matches every UUID.
    public var uuids: Set<UUID>?
    /// Bounds on the value; `nil` matches every value. The engine compares them with canonical values, after
    /// ``validated(for:)`` converted them.
    public var values: ValueBounds?
    /// Metadata predicates, all of which must hold; `nil` matches every sample.
    public var metadata: [MetadataPredicate]?
    /// Only samples written by this client identity (its numeric writer id); `nil` matches every writer. Set by
    /// the server's authorization, never taken from the wire: not part of the public API.
    package var writer: UInt32?

    /// A predicate with optional bounds and options (none by default).
    public init(
        date: DatePredicate = .all, sources: Set<String>? = nil, uuids: Set<UUID>? = nil, values: ValueBounds? = nil,
        metadata: [MetadataPredicate]? = nil
    ) {
        self.init(date: date, sources: sources, uuids: uuids, values: values, writer: nil)
        self.metadata = metadata
    }

    /// A predicate restricted to one writer (the server's authorization and its tests).
    package init(
        date: DatePredicate = .all, sources: Set<String>? = nil, uuids: Set<UUID>? = nil, values: ValueBounds? = nil,
        writer: UInt32?
    ) {
        self.date = date
        self.sources = sources
        self.uuids = uuids
        self.values = values
        self.writer = writer
    }

    /// The filter checked for a query of `type`, its value bounds in the type's canonical unit: throws as
    /// ``DatePredicate/validate()`` and ``ValueBounds/canonical(for:)`` do.
    public func validated(for type: QuantityType) throws -> SampleFilter {
        try date.validate()
        for predicate in metadata ?? [] {
            if predicate.key.isEmpty { throw HealthError(.invalidPredicate, "a metadata predicate has an empty key") }
            for case .number(let number) in predicate.allowedValues ?? [] where !number.isFinite {
                throw HealthError(
                    .invalidPredicate, "the allowed value \(number) of metadata key \(predicate.key) is not finite")
            }
            for value in predicate.allowedValues ?? [] {
                switch value {
                case .string, .number: break
                case .date, .quantity:
                    throw HealthError(
                        .invalidPredicate,
                        "the allowed values of metadata key \(predicate.key) are strings and numbers only")
                }
            }
        }
        var result = self
        result.values = try values?.canonical(for: type)
        return result
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

extension ValueBounds: CustomReflectable {
    /// The fields, leaving out ``categoryValues`` when unset, so printed wire messages (and the golden vectors in
    /// Protocol/vectors) stay as they were before category values existed.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [
            ("lower", lower as Any), ("upper", upper as Any), ("lowerInclusive", lowerInclusive),
            ("upperInclusive", upperInclusive), ("unit", unit),
        ]
        if let categoryValues { children.append(("categoryValues", categoryValues.sorted())) }
        return Mirror(self, children: children, displayStyle: .struct)
    }
}

extension SampleFilter: CustomReflectable {
    /// The fields, leaving out ``values``, ``metadata`` and ``writer`` when unset (the writer is server-side only, never part
    /// of a wire value), so printed wire messages (and the golden vectors in Protocol/vectors) stay as they were.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [
            ("date", date), ("sources", sources as Any), ("uuids", uuids as Any),
        ]
        if let values { children.append(("values", values)) }
        if let metadata { children.append(("metadata", metadata)) }
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
