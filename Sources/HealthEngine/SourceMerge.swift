import HealthModel

/// Receives the merged contributions of a ``SourceMerge``.
///
/// From ``SourceMerge/sweep(_:_:sourceRanks:rankCount:into:)`` segments arrive in increasing time, each starting
/// where the previous one ended or later, and a point after the segments that end at or before its instant. From
/// ``SourceMerge/layered(_:_:sourceRanks:maxDuration:into:)`` calls come in the start order of the samples they
/// stem from, so a call may reach back before the end of the previous one.
protocol MergeSink {
    /// The winning source's samples contribute `rate` per microsecond over `[from, to)` (`from < to`).
    mutating func segment(from: Timestamp, to: Timestamp, rate: Double)
    /// Point samples (no duration) of the winning source at `instant`, together worth `value`.
    mutating func point(at instant: Timestamp, value: Double)
    /// A sample that counts in full: `value` spread evenly over `[from, to)`, or a point when `from == to`.
    mutating func whole(from: Timestamp, to: Timestamp, value: Double)
    /// Rows in start order, each lasting at most `maxDuration`, that count in full when `filter` passes them and
    /// not at all otherwise (a row the filter drops is covered by counted ones).
    mutating func wholeRows<Filter: MergeRowFilter>(
        _ c: Columns, _ rows: Range<Int>, counting filter: Filter, maxDuration: Int64)
}

/// The merged sum of a cumulative type over several sources (HEALTHKIT.md §8).
///
/// Time is cut into elementary segments at every sample boundary. In each segment the highest-priority source
/// among those with a sample covering it wins, and the pro-rated portions of the winner's samples there count;
/// other sources' portions are dropped. A stretch covered by one source counts in full. A sample without a
/// duration is an instant t: it counts when its source ranks at least as high as every source covering t (a
/// sample with a duration covers `[start, end)`, one without covers its own instant).
enum SourceMerge {
    /// Sweeps the selected rows in time order with the ranks of their sources (0 = highest priority, indexed by
    /// source id, every rank `< rankCount`). With a window, only portions inside it count; a plain statistics
    /// query passes `nil` and counts every selected sample's portions without clipping.
    static func sum(
        _ c: Columns, _ selection: Selection, sourceRanks: [Int], rankCount: Int, window: Range<Timestamp>?,
        maxDuration: Int64? = nil
    ) -> Double {
        var total = WindowTotal(window: window)
        merge(c, selection, sourceRanks: sourceRanks, rankCount: rankCount, maxDuration: maxDuration, into: &total)
        return total.total
    }

    /// Feeds the merged contributions to `sink`: by priority layers when at most ``layerLimit`` ranks are
    /// selected (the fast path), otherwise with the heap sweep. Both give the same sums. `maxDuration` (a bound
    /// on the rows' durations, such as ``Series/maxDuration``) spares the fast path measuring it.
    static func merge<Sink: MergeSink>(
        _ c: Columns, _ selection: Selection, sourceRanks: [Int], rankCount: Int, maxDuration: Int64? = nil,
        into sink: inout Sink
    ) {
        if !layered(c, selection, sourceRanks: sourceRanks, maxDuration: maxDuration, into: &sink) {
            sweep(c, selection, sourceRanks: sourceRanks, rankCount: rankCount, into: &sink)
        }
    }

    /// The one sweep behind every merged sum: hands the winner's rate over each elementary segment, and the
    /// point samples that count, to `sink` in time order. Allocates its working arrays once per call.
    static func sweep<Sink: MergeSink>(
        _ c: Columns, _ selection: Selection, sourceRanks: [Int], rankCount: Int, into sink: inout Sink
    ) {
        var active = [Int](repeating: 0, count: rankCount)
        // Per rank: the sum of value / duration over its active samples.
        var rate = [Double](repeating: 0, count: rankCount)
        var activeCount = 0
        var sweep = BoundarySweep(selection)
        while let (previous, time) = sweep.advance(c) {
            if time > previous, let winner = firstActive(active, activeCount) {
                sink.segment(from: previous, to: time, rate: rate[winner])
            }
            while let row = sweep.nextEnding(at: time, c) {
                let rank = sourceRanks[Int(c.sourceIDs[row])]
                active[rank] -= 1
                activeCount -= 1
                rate[rank] = active[rank] == 0 ? 0 : rate[rank] - c.values[row] / Double(c.ends[row] - c.starts[row])
            }
            var pointRank = Int.max
            var pointSum = 0.0
            while let row = sweep.nextStarting(at: time, c) {
                let rank = sourceRanks[Int(c.sourceIDs[row])]
                if c.ends[row] > time {
                    active[rank] += 1
                    activeCount += 1
                    rate[rank] += c.values[row] / Double(c.ends[row] - time)
                    sweep.activate(row, c)
                } else if rank < pointRank {
                    (pointRank, pointSum) = (rank, c.values[row])
                } else if rank == pointRank {
                    pointSum += c.values[row]
                }
            }
            if pointRank != .max, pointRank <= (firstActive(active, activeCount) ?? .max) {
                sink.point(at: time, value: pointSum)
            }
        }
    }
}

/// The instants of a sweep over selected rows in time order: every start, and every end of a row made active,
/// each once (``SourceMerge`` and ``CategoryCoverage`` cut time into elementary segments with it).
///
/// Each step: ``advance(_:)`` gives the previous instant and the next one; then take the rows ending there with
/// ``nextEnding(at:_:)``, then those starting there with ``nextStarting(at:_:)``, calling ``activate(_:_:)`` for each
/// that lasts past the instant so that its end becomes an instant of the sweep.
struct BoundarySweep {
    private var ending = EndHeap()
    private var starting: FlattenSequence<[Range<Int>]>.Iterator
    private var nextStart: Int?
    private var current = Timestamp.min

    init(_ selection: Selection) {
        starting = selection.rows.makeIterator()
        nextStart = starting.next()
    }

    /// The instant reached so far and the next instant where a row starts or an active row ends; `nil` once no
    /// row is left. The first step's previous instant is `Timestamp.min`.
    @inline(__always)
    mutating func advance(_ c: Columns) -> (previous: Timestamp, time: Timestamp)? {
        guard nextStart != nil || !ending.isEmpty else { return nil }
        let startTime = nextStart.map { c.starts[$0] } ?? .max
        let endTime = ending.first.map { c.ends[$0] } ?? .max
        let previous = current
        current = min(startTime, endTime)
        return (previous, current)
    }

    /// The next active row that ends at `time`, removed from the active ones.
    @inline(__always)
    mutating func nextEnding(at time: Timestamp, _ c: Columns) -> Int? {
        guard let row = ending.first, c.ends[row] == time else { return nil }
        ending.removeFirst(c)
        return row
    }

    /// The next row, in start order, that starts at `time`.
    @inline(__always)
    mutating func nextStarting(at time: Timestamp, _ c: Columns) -> Int? {
        guard let row = nextStart, c.starts[row] == time else { return nil }
        nextStart = starting.next()
        return row
    }

    /// Makes `row` active: its end becomes an instant of the sweep.
    @inline(__always)
    mutating func activate(_ row: Int, _ c: Columns) { ending.insert(row, c) }
}

/// The highest-priority rank with an active sample, or nil when none is active. A plain function rather than a
/// closure over the sweep's arrays, so those stay unboxed locals.
@inline(__always)
private func firstActive(_ active: [Int], _ activeCount: Int) -> Int? {
    guard activeCount > 0 else { return nil }
    var rank = 0
    while active[rank] == 0 { rank += 1 }
    return rank
}

/// A merge sink that totals everything, or only the portions inside a window.
struct WindowTotal: MergeSink {
    let window: Range<Timestamp>?
    private(set) var total = 0.0

    init(window: Range<Timestamp>?) { self.window = window }

    mutating func segment(from: Timestamp, to: Timestamp, rate: Double) {
        guard let window else {
            total += rate * Double(to - from)
            return
        }
        total += rate * Double(max(0, min(to, window.upperBound) - max(from, window.lowerBound)))
    }

    mutating func point(at instant: Timestamp, value: Double) {
        if window?.contains(instant) ?? true { total += value }
    }

    mutating func whole(from: Timestamp, to: Timestamp, value: Double) {
        guard let window else {
            total += value
            return
        }
        if from == to {
            point(at: from, value: value)
        } else {
            let overlap = min(to, window.upperBound) - max(from, window.lowerBound)
            if overlap > 0 { total += value * (Double(overlap) / Double(to - from)) }
        }
    }

    mutating func wholeRows<Filter: MergeRowFilter>(
        _ c: Columns, _ rows: Range<Int>, counting filter: Filter, maxDuration: Int64
    ) {
        guard window != nil else {
            total += filter.sum(c, rows)
            return
        }
        for row in rows where filter.counts(c, row) {
            whole(from: c.starts[row], to: c.ends[row], value: c.values[row])
        }
    }
}

/// A binary min-heap of rows keyed by their end: the samples in progress during the sweep.
struct EndHeap {
    private var rows: [Int] = []

    var isEmpty: Bool { rows.isEmpty }

    /// The row that ends first.
    var first: Int? { rows.first }

    mutating func insert(_ row: Int, _ c: Columns) {
        rows.append(row)
        var child = rows.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard c.ends[rows[child]] < c.ends[rows[parent]] else { break }
            rows.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeFirst(_ c: Columns) {
        let last = rows.removeLast()
        guard !rows.isEmpty else { return }
        rows[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < rows.count else { break }
            let right = left + 1
            let smaller = right < rows.count && c.ends[rows[right]] < c.ends[rows[left]] ? right : left
            guard c.ends[rows[smaller]] < c.ends[rows[parent]] else { break }
            rows.swapAt(parent, smaller)
            parent = smaller
        }
    }
}
