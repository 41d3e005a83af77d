import HealthModel

extension HealthStore {
    /// The buckets of a collection (see ``collection(subject:type:filter:options:anchor:interval:timeZone:unit:enumerateFrom:enumerateTo:)``)
    /// that hold any instant of `spans`, empty ones included, in time order: what a live collection pushes after
    /// a change.
    ///
    /// Spans falling in the same or adjacent buckets are joined into runs first, so the cost follows the buckets
    /// touched, not the samples changed; the boundaries come from `boundaries` (kept between calls: pass the
    /// same cache for every step of one live collection) and all runs are read under one read lock. Without date
    /// bounds in `filter` only the samples overlapping the runs are read (a binary search); with date bounds the
    /// whole filter's samples take part. Thread-safe.
    public func collectionBuckets(
        subject: String, type: QuantityType, filter: SampleFilter = .all, options: StatisticsOptions,
        anchor: Timestamp, interval: CalendarInterval, timeZone: String, unit: HealthUnit? = nil,
        touching spans: [ClosedRange<Timestamp>],
        boundaries cache: BucketBoundaryCache = BucketBoundaryCache()
    ) throws -> [Statistics] {
        var filter = filter
        let (transform, calendar) = try Self.collectionSetup(
            subject: subject, type: type, filter: &filter, options: options, anchor: anchor, interval: interval,
            timeZone: timeZone, unit: unit)
        let runs = try Self.bucketRuns(of: spans, calendar: calendar, cache: cache)
        guard !runs.isEmpty else { return [] }
        return read(type) { state -> [Statistics] in
            var buckets: [Statistics] = []
            for boundaries in runs {
                var narrowed = filter
                if filter.date.start == nil, filter.date.end == nil {
                    // Every sample overlapping the run takes part (pro-rated, merged); no other can change it.
                    narrowed.date = DatePredicate(start: boundaries.span.lowerBound, end: boundaries.span.upperBound)
                }
                let selection = state.series[subject]?.select(narrowed) ?? Selection()
                guard let series = state.series[subject], !selection.isEmpty else {
                    buckets += boundaries.map { Statistics(start: $0.start, end: $0.end, figures: StatisticsFigures()) }
                    continue
                }
                buckets += series.collection(
                    of: selection, boundaries: boundaries, options: options, style: type.style,
                    unit: transform, listEmpty: true, envelope: type.categoryValues?.envelope)
            }
            return buckets
        }
    }

    /// The buckets holding any instant of `spans`, as runs of consecutive buckets in time order; runs that touch
    /// or overlap are joined. One boundary lookup per run, not per span.
    static func bucketRuns(
        of spans: [ClosedRange<Timestamp>], calendar: BucketCalendar, cache: BucketBoundaryCache
    ) throws -> [BucketBoundaries] {
        var runs: [BucketBoundaries] = []
        var runSpan: ClosedRange<Timestamp>? = nil
        for span in spans.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = runs.last, span.upperBound < last.span.upperBound {
                continue  // already inside the run's buckets
            }
            let buckets = try cache.boundaries(
                of: calendar, from: span.lowerBound, to: span.upperBound, maximumBucketCount: maximumCollectionBuckets)
            if let last = runs.last, let covered = runSpan,
                buckets.firstBucketNumber <= last.firstBucketNumber + last.count
            {
                // Touching or overlapping the previous run: one run from its first instant to this span's last.
                let joined = covered.lowerBound...max(covered.upperBound, span.upperBound)
                runs[runs.count - 1] = try cache.boundaries(
                    of: calendar, from: joined.lowerBound, to: joined.upperBound,
                    maximumBucketCount: maximumCollectionBuckets)
                runSpan = joined
            } else {
                runs.append(buckets)
                runSpan = span
            }
        }
        return runs
    }
}
