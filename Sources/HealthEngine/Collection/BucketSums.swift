import HealthModel

/// Pro-rated sums per collection bucket (HEALTHKIT.md §6), filled in time order with a boundary cursor.
///
/// A sample with a duration gives each bucket the share of its value that its overlap with the bucket
/// represents, whichever bucket it started in (so also buckets outside the predicate's range); a sample without
/// one counts in full in the bucket holding its instant. Portions outside the boundaries' span are dropped.
/// Also the ``MergeSink`` of a merged collection: ``SourceMerge`` feeds it the winners' segments.
struct BucketSums: MergeSink {
    /// Bucket starts, then the last bucket's end (``BucketBoundaries/starts``).
    let bounds: [Timestamp]
    /// Sum per bucket, in the canonical unit.
    private(set) var sums: [Double]
    /// Whether any sample reached the bucket (with a positive overlap, or an instant inside it).
    private(set) var touched: [Bool]
    /// The bucket of the last instant handled; moves forward, or back when a merge reaches back.
    private var cursor = 0
    /// The bucket of the last row ``addRun(_:_:maxDuration:)`` summed in bulk; runs come in start order.
    private var runBucket = 0

    init(bounds: [Timestamp]) {
        self.bounds = bounds
        sums = [Double](repeating: 0, count: bounds.count - 1)
        touched = [Bool](repeating: false, count: bounds.count - 1)
    }

    private var bucketCount: Int { bounds.count - 1 }

    /// Moves the cursor to the bucket holding `instant` (which lies inside the span).
    private mutating func advance(to instant: Timestamp) {
        while cursor + 1 < bucketCount, bounds[cursor + 1] <= instant { cursor += 1 }
        while cursor > 0, bounds[cursor] > instant { cursor -= 1 }
    }

    /// Spreads a single-source run of rows in start order. Rows that start before `bucketEnd - maxDuration`
    /// cannot reach the next bucket, so each bucket's bulk is one plain four-accumulator sum; only the rows near
    /// a boundary are spread one by one. `maxDuration` bounds every row's duration.
    mutating func addRun(_ c: Columns, _ rows: Range<Int>, maxDuration: Int64) {
        addRun(c, rows, maxDuration: maxDuration, counting: EveryRow())
    }

    /// ``addRun(_:_:maxDuration:)`` counting only the rows `filter` passes. Every bucket holding a row's start
    /// is marked touched, counted or not: a merge drops a row only where a counted one covers it.
    mutating func addRun<Filter: MergeRowFilter>(
        _ c: Columns, _ rows: Range<Int>, maxDuration: Int64, counting filter: Filter
    ) {
        addRun(FilteredColumns(columns: c, filter: filter), rows, maxDuration: maxDuration)
    }

    /// Spreads a run of rows in start order read through `source` (decoded columns, or a regular block read
    /// without decoding: ``SparseRegularRows``), as ``addRun(_:_:maxDuration:)`` describes. Both give the same
    /// sums bit for bit: the bulk of a bucket is one four-accumulator sum in row order.
    mutating func addRun<Source: SummedRows>(_ source: Source, _ rows: Range<Int>, maxDuration: Int64) {
        let spanStart = bounds[0]
        let spanEnd = bounds[bucketCount]
        var row = rows.lowerBound
        while row < rows.upperBound, source.start(row) < spanStart {
            if source.counts(row) { spread(from: source.start(row), to: source.end(row), value: source.value(row)) }
            row += 1
        }
        var bucket = runBucket
        defer { runBucket = bucket }
        while row < rows.upperBound {
            let start = source.start(row)
            if start >= spanEnd { break }
            while bounds[bucket + 1] <= start { bucket += 1 }
            let bucketEnd = bounds[bucket + 1]
            let next = source.firstRow(in: row..<rows.upperBound, startingAtLeast: bucketEnd)
            let safeLimit = bucketEnd.subtractingSaturating(maxDuration)
            let inside = start >= safeLimit ? row : source.firstRow(in: row..<next, startingAtLeast: safeLimit)
            if inside > row {
                sums[bucket] += source.sum(row..<inside)
                touched[bucket] = true
            }
            for straddling in inside..<next where source.counts(straddling) {
                spread(from: source.start(straddling), to: source.end(straddling), value: source.value(straddling))
            }
            row = next
        }
    }

    mutating func wholeRows<Filter: MergeRowFilter>(
        _ c: Columns, _ rows: Range<Int>, counting filter: Filter, maxDuration: Int64
    ) {
        addRun(c, rows, maxDuration: maxDuration, counting: filter)
    }

    /// Adds a sample's pro-rated portions to every bucket it overlaps.
    private mutating func spread(from start: Timestamp, to end: Timestamp, value: Double) {
        if start == end {
            point(at: start, value: value)
            return
        }
        let from = max(start, bounds[0])
        let to = min(end, bounds[bucketCount])
        guard from < to else { return }
        advance(to: from)
        let duration = Double(end - start)
        var bucket = cursor
        while bucket < bucketCount, bounds[bucket] < to {
            let overlap = min(to, bounds[bucket + 1]) - max(from, bounds[bucket])
            if overlap > 0 {
                sums[bucket] += value * Double(overlap) / duration
                touched[bucket] = true
            }
            bucket += 1
        }
    }

    /// A sample inside the cursor's bucket (the common case) is added there at once, otherwise spread.
    mutating func whole(from start: Timestamp, to end: Timestamp, value: Double) {
        if start >= bounds[cursor], end <= bounds[cursor + 1], start < bounds[cursor + 1] {
            sums[cursor] += value
            touched[cursor] = true
        } else {
            spread(from: start, to: end, value: value)
        }
    }

    mutating func segment(from: Timestamp, to: Timestamp, rate: Double) {
        let from = max(from, bounds[0])
        let to = min(to, bounds[bucketCount])
        guard from < to else { return }
        advance(to: from)
        var bucket = cursor
        while bucket < bucketCount, bounds[bucket] < to {
            let overlap = min(to, bounds[bucket + 1]) - max(from, bounds[bucket])
            if overlap > 0 {
                sums[bucket] += rate * Double(overlap)
                touched[bucket] = true
            }
            bucket += 1
        }
    }

    mutating func point(at instant: Timestamp, value: Double) {
        guard instant >= bounds[0], instant < bounds[bucketCount] else { return }
        advance(to: instant)
        sums[cursor] += value
        touched[cursor] = true
    }
}

/// Rows in start order as ``BucketSums/addRun(_:_:maxDuration:)`` reads them.
protocol SummedRows {
    func start(_ row: Int) -> Timestamp
    func end(_ row: Int) -> Timestamp
    func value(_ row: Int) -> Double
    /// Whether `row` counts (a merge's filter; otherwise every row).
    func counts(_ row: Int) -> Bool
    /// The first row of `rows` whose start is `>= time`, or `rows.upperBound`.
    func firstRow(in rows: Range<Int>, startingAtLeast time: Timestamp) -> Int
    /// The four-accumulator sum (``ValueSum``) of the values of the rows in `rows` that count.
    func sum(_ rows: Range<Int>) -> Double
}

/// Decoded columns whose rows count as `filter` says.
struct FilteredColumns<Filter: MergeRowFilter>: SummedRows {
    let columns: Columns
    let filter: Filter

    @inline(__always) func start(_ row: Int) -> Timestamp { columns.starts[row] }
    @inline(__always) func end(_ row: Int) -> Timestamp { columns.ends[row] }
    @inline(__always) func value(_ row: Int) -> Double { columns.values[row] }
    @inline(__always) func counts(_ row: Int) -> Bool { filter.counts(columns, row) }
    @inline(__always) func firstRow(in rows: Range<Int>, startingAtLeast time: Timestamp) -> Int {
        columns.firstRow(in: rows, startingAtLeast: time)
    }
    @inline(__always) func sum(_ rows: Range<Int>) -> Double { filter.sum(columns, rows) }
}

extension Columns {
    /// The first row of `rows` (sorted by start) whose start is `>= time`, or `rows.upperBound`.
    func firstRow(in rows: Range<Int>, startingAtLeast time: Timestamp) -> Int {
        starts[rows].partitionPoint { $0 < time }
    }
}
