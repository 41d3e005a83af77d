import HealthModel

extension HealthStore {
    /// The buckets of a collection (see ``collection(subject:type:filter:options:anchor:interval:timeZone:unit:enumerateFrom:enumerateTo:)``)
    /// that hold any instant of `spans`, empty ones included: what a live collection pushes after a change.
    ///
    /// Reads only the samples overlapping those buckets (a binary search) when `filter` has no date bounds, so
    /// the cost follows the change, not the series; with date bounds it recomputes over the whole filter.
    public func collectionBuckets(
        subject: String, type: String, filter: SampleFilter = .all, options: StatisticsOptions, anchor: Timestamp,
        interval: CalendarInterval, timeZone: String, unit: String? = nil, touching spans: [ClosedRange<Timestamp>]
    ) throws -> [Statistics] {
        let calendar = try BucketCalendar(anchor: anchor, interval: interval, timeZoneIdentifier: timeZone)
        var byStart: [Timestamp: Statistics] = [:]
        for span in spans {
            var narrowed = filter
            if filter.date.start == nil, filter.date.end == nil {
                let buckets = try calendar.boundaries(
                    from: span.lowerBound, to: span.upperBound, maximumBucketCount: Self.maximumCollectionBuckets)
                // Every sample overlapping the buckets takes part (pro-rated, merged); no other can change them.
                narrowed.date = DatePredicate(start: buckets.span.lowerBound, end: buckets.span.upperBound)
            }
            let buckets = try collection(
                subject: subject, type: type, filter: narrowed, options: options, anchor: anchor, interval: interval,
                timeZone: timeZone, unit: unit, enumerateFrom: span.lowerBound, enumerateTo: span.upperBound)
            for bucket in buckets { byStart[bucket.start] = bucket }
        }
        return byStart.values.sorted { $0.start < $1.start }
    }
}
