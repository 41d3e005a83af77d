import HealthModel

extension HealthStore {
    /// The buckets of a collection (see ``collection(subject:type:filter:options:anchor:interval:timeZone:unit:enumerateFrom:enumerateTo:)``)
    /// that hold any instant of `spans`, empty ones included: what a live collection pushes after a change.
    ///
    /// Builds the calendar and each span's boundaries once, and reads only the samples overlapping those
    /// buckets (a binary search) when `filter` has no date bounds, so the cost follows the change, not the
    /// series; with date bounds the whole filter's samples take part.
    public func collectionBuckets(
        subject: String, type: String, filter: SampleFilter = .all, options: StatisticsOptions, anchor: Timestamp,
        interval: CalendarInterval, timeZone: String, unit: String? = nil, touching spans: [ClosedRange<Timestamp>]
    ) throws -> [Statistics] {
        let (quantityType, transform, calendar) = try Self.collectionSetup(
            subject: subject, type: type, filter: filter, options: options, anchor: anchor, interval: interval,
            timeZone: timeZone, unit: unit)
        var byStart: [Timestamp: Statistics] = [:]
        for span in spans {
            let boundaries = try calendar.boundaries(
                from: span.lowerBound, to: span.upperBound, maximumBucketCount: Self.maximumCollectionBuckets)
            var narrowed = filter
            if filter.date.start == nil, filter.date.end == nil {
                // Every sample overlapping the buckets takes part (pro-rated, merged); no other can change them.
                narrowed.date = DatePredicate(start: boundaries.span.lowerBound, end: boundaries.span.upperBound)
            }
            let buckets = read(quantityType) { state -> [Statistics] in
                let selection = state.series[subject]?.select(narrowed) ?? Selection()
                guard let series = state.series[subject], !selection.isEmpty else {
                    return boundaries.map { Statistics(start: $0.start, end: $0.end, figures: StatisticsFigures()) }
                }
                return series.collection(
                    of: selection, boundaries: boundaries, options: options, style: quantityType.style,
                    unit: transform, listEmpty: true)
            }
            for bucket in buckets { byStart[bucket.start] = bucket }
        }
        return byStart.values.sorted { $0.start < $1.start }
    }
}
