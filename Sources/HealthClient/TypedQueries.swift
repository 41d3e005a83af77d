import Foundation
import HealthModel
import HealthWire

// The typed face of the client: quantity types as `QuantityType`, units as `HealthUnit`, instants as `Date`
// beside the microsecond `Timestamp`. Each method is a one-liner over its String form (kept for tools that pass
// identifiers through), with the same threading and retry contract: thread-safe, retryable errors retried per
// `ClientConfiguration.retry`, permanent ones thrown at once.

extension HealthClient {
    /// Deletes `type`'s samples of `subject` by UUID or by filter; returns how many were deleted. Retried like
    /// every request (a retried delete deletes nothing more).
    public func delete(_ type: QuantityType, subject: String, _ selection: DeleteSelection)
        async throws(HealthClientError)
        -> UInt64
    {
        try await delete(type.identifier, subject: subject, selection)
    }

    /// HKSampleQuery: matching samples, in the requested order, values in `unit` (default: the type's canonical
    /// unit); `limit` 0 means all.
    public func samples(
        _ type: QuantityType, subject: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending,
        limit: Int = 0, unit: HealthUnit? = nil
    ) async throws(HealthClientError) -> [Sample] {
        try await samples(
            type.identifier, subject: subject, filter: filter, sort: sort, limit: limit, unit: unit?.symbol ?? "")
    }

    /// HKStatisticsQuery for a typed type and unit: the figures, or `nil` when no sample matches (as the form
    /// that takes the type's name).
    public func statistics(
        _ type: QuantityType, subject: String, options: StatisticsOptions, filter: SampleFilter = .all,
        unit: HealthUnit? = nil
    ) async throws(HealthClientError) -> StatisticsResult? {
        try await statistics(
            type.identifier, subject: subject, options: options, filter: filter, unit: unit?.symbol ?? "")
    }

    /// HKAnchoredObjectQuery: samples added and deleted after `anchor`, at most `limit` (0: the server's page).
    public func changes(
        _ type: QuantityType, subject: String, filter: SampleFilter = .all, since anchor: UInt64 = 0, limit: UInt64 = 0,
        unit: HealthUnit? = nil
    ) async throws(HealthClientError) -> ChangesResult {
        try await changes(
            type.identifier, subject: subject, filter: filter, since: anchor, limit: limit, unit: unit?.symbol ?? "")
    }

    /// HKObserverQuery for a typed type: the newest anchor on each change, 0 after a reconnect.
    public func observe(
        _ type: QuantityType, subject: String, filter: SampleFilter = .all
    ) -> AsyncThrowingStream<UInt64, any Error> {
        observe(type.identifier, subject: subject, filter: filter)
    }

    /// The sources of `type` for `subject`, highest priority first.
    public func sourcePriority(_ type: QuantityType, subject: String) async throws(HealthClientError) -> [SourceInfo] {
        try await sourcePriority(type.identifier, subject: subject)
    }

    /// Puts the named sources of `type` first, in this order; returns the resulting order.
    public func setSourcePriority(_ type: QuantityType, subject: String, order: [String])
        async throws(HealthClientError)
        -> [SourceInfo]
    {
        try await setSourcePriority(type.identifier, subject: subject, order: order)
    }

    /// HealthKit's sharing status of each type for this connection's identity, in request order.
    public func authorizationStatus(_ types: [QuantityType], subject: String = "") async throws(HealthClientError)
        -> [AuthorizationStatus.TypeAuthorization]
    {
        try await authorizationStatus(types.map(\.identifier), subject: subject)
    }
}

extension LiveQuery where Element == UInt64 {
    /// HKObserverQuery: the newest anchor on each change of `type`, 0 after a reconnect.
    public static func observer(_ type: QuantityType, subject: String, filter: SampleFilter = .all) -> LiveQuery {
        observer(type.identifier, subject: subject, filter: filter)
    }
}

extension CollectionQuery {
    /// A collection of `type` per calendar bucket of `interval` in `timeZone`, phased by `anchor`.
    public init(
        subject: String, type: QuantityType, filter: SampleFilter = .all, options: StatisticsOptions, anchor: Date,
        interval: CalendarInterval, timeZone: TimeZone, unit: HealthUnit? = nil
    ) {
        self.init(
            subject: subject, type: type.identifier, filter: filter, options: options,
            anchor: Date.timestamp(anchor), interval: interval, timeZone: timeZone.identifier, unit: unit?.symbol ?? "")
    }
}

extension ChangesQuery {
    /// The changes of `type` after `anchor` (0: from the beginning).
    public init(
        subject: String, type: QuantityType, filter: SampleFilter = .all, anchor: UInt64 = 0, unit: HealthUnit? = nil
    ) {
        self.init(subject: subject, type: type.identifier, filter: filter, anchor: anchor, unit: unit?.symbol ?? "")
    }
}

// MARK: Dates and durations beside microseconds

extension Date {
    /// The instant `timestamp` (microseconds since 1970).
    public init(timestamp: Timestamp) {
        self.init(timeIntervalSince1970: Double(timestamp) / 1e6)
    }

    /// This instant in whole microseconds since 1970 (rounded to the nearest).
    public var timestamp: Timestamp { Date.timestamp(self) }

    /// `date` in whole microseconds since 1970 (rounded to the nearest).
    static func timestamp(_ date: Date) -> Timestamp { Timestamp((date.timeIntervalSince1970 * 1e6).rounded()) }
}

extension Duration {
    /// This duration in whole microseconds (truncated), the unit of ``HealthModel/Timestamp`` arithmetic.
    public var wholeMicroseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }
}

extension Sample {
    /// A sample over `start ... end` given as dates (stored in whole microseconds); the UUID defaults to a random
    /// one: use ``withStableID()`` for one derived from the content.
    public init(
        uuid: UUID = UUID(), subject: String, type: QuantityType, start: Date, end: Date, value: Double,
        unit: HealthUnit,
        source: SourceInfo, metadata: [String: MetadataValue] = [:]
    ) {
        self.init(
            uuid: uuid, subject: subject, type: type, start: start.timestamp, end: end.timestamp, value: value,
            unit: unit,
            source: source, metadata: metadata)
    }

    /// ``start`` as a date.
    public var startDate: Date { Date(timestamp: start) }
    /// ``end`` as a date.
    public var endDate: Date { Date(timestamp: end) }
}

extension DatePredicate {
    /// Samples overlapping `start ..< end` given as dates (either may be `nil` for no bound).
    public init(start: Date?, end: Date? = nil, strictStartDate: Bool = false, strictEndDate: Bool = false) {
        self.init(
            start: start?.timestamp, end: end?.timestamp, strictStartDate: strictStartDate, strictEndDate: strictEndDate
        )
    }
}

extension Statistics {
    /// The bucket's (or range's) start as a date.
    public var startDate: Date { Date(timestamp: start) }
    /// The bucket's (or range's) end as a date.
    public var endDate: Date { Date(timestamp: end) }
}
