import HealthModel

extension HealthStore {
    /// The most buckets one collection query may span; a longer span is refused with ``ErrorCode/invalidInterval``.
    public static let maximumCollectionBuckets = 1_000_000

    /// Checks a collection request and resolves its unit and calendar (shared by one-off and live queries);
    /// `filter` comes back validated, its value bounds in the canonical unit.
    static func collectionSetup(
        subject: String, type: QuantityType, filter: inout SampleFilter, options: StatisticsOptions,
        anchor: Timestamp, interval: CalendarInterval, timeZone: String, unit: HealthUnit?
    ) throws -> (UnitTransform, BucketCalendar) {
        try options.validate(for: type)
        let transform = try UnitTransform(type: type, unit: unit)
        try SampleRules.validate(subject: subject)
        filter = try filter.validated(for: type)
        return (transform, try BucketCalendar(anchor: anchor, interval: interval, timeZoneIdentifier: timeZone))
    }

    /// HKStatisticsCollectionQuery (HEALTHKIT.md §7): statistics of one subject's samples of a type matching
    /// `filter`, per calendar bucket of `interval` from `anchor` in the IANA zone `timeZone`, in time order.
    ///
    /// Each bucket's start and end are its boundaries. Sums are pro-rated to the buckets (§6, also into buckets
    /// outside the predicate's range) and merged across sources (§8); durations and most recents follow the
    /// samples overlapping the bucket; average, minimum and maximum come from the samples that start in it. Without an enumeration only buckets with data are returned (none when nothing
    /// matches); with both `enumerateFrom` and `enumerateTo`, every bucket from the one holding `enumerateFrom`
    /// to the one holding `enumerateTo`, empty ones with no figures. Boundaries are computed once per query.
    /// Figures in `unit` (`nil`: canonical; durations in microseconds).
    ///
    /// Throws ``ErrorCode/invalidOptions``, ``ErrorCode/invalidTimeZone``, ``ErrorCode/invalidInterval`` (also
    /// for more than ``maximumCollectionBuckets`` buckets) and ``ErrorCode/invalidArgument`` (one enumeration
    /// bound without the other, bounds in the wrong order). Thread-safe; holds the type's read lock while it runs.
    public func collection(
        subject: String, type: QuantityType, filter: SampleFilter = .all, options: StatisticsOptions,
        anchor: Timestamp, interval: CalendarInterval, timeZone: String, unit: HealthUnit? = nil,
        enumerateFrom: Timestamp? = nil, enumerateTo: Timestamp? = nil
    ) throws -> [Statistics] {
        var filter = filter
        let (transform, calendar) = try Self.collectionSetup(
            subject: subject, type: type, filter: &filter, options: options, anchor: anchor, interval: interval,
            timeZone: timeZone, unit: unit)
        let enumerated: BucketBoundaries?
        switch (enumerateFrom, enumerateTo) {
        case (nil, nil):
            enumerated = nil
        case (let from?, let to?):
            enumerated = try calendar.boundaries(from: from, to: to, maximumBucketCount: Self.maximumCollectionBuckets)
        default:
            throw HealthError(.invalidArgument, "an enumeration needs both a start and an end date, or neither")
        }
        return try read(type) { state in
            let series = state.series[subject]
            let selection = series?.select(filter) ?? Selection()
            guard let series, !selection.isEmpty else {
                // Every bucket but a zero-length one (Pacific/Apia's skipped day), as with data.
                return enumerated.map {
                    $0.map { Statistics(start: $0.start, end: $0.end, figures: StatisticsFigures()) }
                        .filter { $0.start < $0.end }
                }
                    ?? []
            }
            let boundaries: BucketBoundaries
            if let enumerated {
                boundaries = enumerated
            } else {
                let span = series.collectionSpan(of: selection, cumulative: Series.followsOverlaps(options))
                boundaries = try calendar.boundaries(
                    from: span.lowerBound, to: span.upperBound, maximumBucketCount: Self.maximumCollectionBuckets)
            }
            return series.collection(
                of: selection, boundaries: boundaries, options: options, style: type.style, unit: transform,
                listEmpty: enumerated != nil, envelope: type.categoryValues?.envelope)
        }
    }
}
