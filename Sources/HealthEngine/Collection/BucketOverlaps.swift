import HealthModel

/// The figures of a collection that follow the bucket rather than the sample's start: per bucket, the time the
/// selected samples cover inside it (overlaps counted once, across sources) and the most recent sample that
/// overlaps it, with that sample's own interval.
///
/// A sample overlaps bucket `[b₀, b₁)` when it starts before `b₁` and ends after `b₀`; a point sample (start =
/// end) overlaps the bucket holding its instant. Feed rows in start order with ``add(_:row:)``: each bucket's
/// clipped intervals then arrive in start order too, so its covered time is a running union.
struct BucketOverlaps {
    private let bounds: [Timestamp]
    private let wantsDuration: Bool
    private let wantsMostRecent: Bool
    /// Per bucket: covered time closed so far, and the open span of the union.
    private var covered: [Int64]
    private var spanStart: [Timestamp]
    private var spanEnd: [Timestamp]
    /// Per bucket: whether any sample overlaps it, and the most recent one as (end, start, row).
    private(set) var touched: [Bool]
    private var latest: [(end: Timestamp, start: Timestamp, row: Int)]
    /// The first bucket a row starting at or after the last fed start can overlap.
    private var firstBucket = 0

    init(bounds: [Timestamp], options: StatisticsOptions) {
        self.bounds = bounds
        wantsDuration = options.contains(.duration)
        wantsMostRecent = options.contains(.mostRecent)
        let count = bounds.count - 1
        covered = wantsDuration ? Array(repeating: 0, count: count) : []
        spanStart = wantsDuration ? Array(repeating: 0, count: count) : []
        spanEnd = wantsDuration ? Array(repeating: .min, count: count) : []
        touched = Array(repeating: false, count: count)
        latest = wantsMostRecent ? Array(repeating: (.min, .min, -1), count: count) : []
    }

    /// Whether the options ask for any figure this type computes.
    static func isNeeded(for options: StatisticsOptions) -> Bool {
        options.contains(.duration) || options.contains(.mostRecent)
    }

    mutating func add(_ c: Columns, row: Int) {
        let start = c.starts[row]
        let end = c.ends[row]
        let bucketCount = bounds.count - 1
        while firstBucket < bucketCount, bounds[firstBucket + 1] <= start { firstBucket += 1 }
        guard firstBucket < bucketCount, start < bounds[bucketCount] else { return }
        if end == start {
            // A point sample overlaps only the bucket holding it.
            guard start >= bounds[0] else { return }
            record(row, start: start, end: end, in: firstBucket)
            return
        }
        var bucket = firstBucket
        while bucket < bucketCount, bounds[bucket] < end {
            if bounds[bucket + 1] > bounds[bucket], end > bounds[bucket] {
                record(row, start: start, end: end, in: bucket)
            }
            bucket += 1
        }
    }

    private mutating func record(_ row: Int, start: Timestamp, end: Timestamp, in bucket: Int) {
        touched[bucket] = true
        if wantsMostRecent, (end, start, row) > latest[bucket] { latest[bucket] = (end, start, row) }
        guard wantsDuration else { return }
        let clippedStart = max(start, bounds[bucket])
        let clippedEnd = min(end, bounds[bucket + 1])
        if clippedStart > spanEnd[bucket] {
            if spanEnd[bucket] > spanStart[bucket] { covered[bucket] += spanEnd[bucket] - spanStart[bucket] }
            (spanStart[bucket], spanEnd[bucket]) = (clippedStart, clippedEnd)
        } else if clippedEnd > spanEnd[bucket] {
            spanEnd[bucket] = clippedEnd
        }
    }

    /// Sets `figures`' duration and most recent to those of `bucket` (which must be touched).
    func fill(_ figures: inout StatisticsFigures, bucket: Int, _ c: Columns, unit: UnitTransform) {
        if wantsDuration {
            let open = spanEnd[bucket] > spanStart[bucket] ? spanEnd[bucket] - spanStart[bucket] : 0
            figures.duration = covered[bucket] + open
        }
        if wantsMostRecent {
            let best = latest[bucket]
            figures.mostRecent = MostRecent(value: unit.level(c.values[best.row]), start: best.start, end: best.end)
        }
    }
}
