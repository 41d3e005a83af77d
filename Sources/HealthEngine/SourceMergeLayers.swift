import HealthModel

/// The fast path of the merged sum (HEALTHKIT.md §8) when few source identities are selected: by priority layers.
///
/// The elementary-segment rule of ``SourceMerge`` comes down to this: a sample of rank r counts over the part of
/// its interval that no sample with a duration of a higher-priority rank covers; a point of rank r at t counts
/// when no such sample covers t and no point of a higher-priority rank lies at t. So two passes over the rows in
/// start order replace the heap sweep. The first builds each rank's *union* (its samples' intervals joined) and
/// the best rank of the points at each instant; from the unions, each rank's *coverage* (the union of the
/// higher ranks' unions). The second hands every sample nothing covers to the sink whole (the common case, which
/// a sink sums in bulk), drops a sample its coverage holds entirely, and hands only the uncovered pieces of the
/// rest. Stretches where one source has data thus cost a comparison per row, not a heap event per boundary.
///
/// The results equal the sweep's up to the order of floating-point additions (a whole sample adds its value, a
/// piece `value / duration × length`, where the sweep adds per segment the winner's summed rates × length).
extension SourceMerge {
    /// Most ranks present in the selection for which layers pay off: building the coverages costs up to ranks ×
    /// union intervals, so beyond this the heap sweep is used.
    static let layerRankLimit = 8

    /// Feeds `sink` like ``sweep(_:_:sourceRanks:rankCount:into:)``, but in the start order of the samples (so
    /// a sink sees an instant earlier than the last one it saw) and with whole samples where nothing above them
    /// covers them. Returns false, having called nothing on `sink`, when more than ``layerRankLimit`` ranks are
    /// present.
    static func layered<Sink: MergeSink>(
        _ c: Columns, _ selection: Selection, sourceRanks: [Int], rankCount: Int, into sink: inout Sink
    ) -> Bool {
        guard let layers = RankLayers(c, selection, sourceRanks: sourceRanks, rankCount: rankCount) else {
            return false
        }
        let top = layers.topRank
        let covered = layers.covered
        var cursor = layers.coverageStart
        let coverageEnd = layers.coverageEnd
        let points = layers.points
        var pointIndex = 0
        for run in selection.runs {
            for row in run {
                let rank = sourceRanks[Int(c.sourceIDs[row])]
                let start = c.starts[row]
                let end = c.ends[row]
                if rank == top {
                    sink.whole(from: start, to: end, value: c.values[row])
                    continue
                }
                // The first interval of the coverage that ends after `start`: earlier ones cover no later row.
                var first = cursor[rank]
                let limit = coverageEnd[rank]
                while first < limit, covered[first].end <= start { first += 1 }
                cursor[rank] = first
                if start < end {
                    if first == limit || covered[first].start >= end {
                        sink.whole(from: start, to: end, value: c.values[row])
                    } else if covered[first].start > start || covered[first].end < end {
                        handPieces(
                            from: start, to: end, value: c.values[row], covered: covered,
                            coverage: first..<limit, into: &sink)
                    }
                } else if first == limit || covered[first].start > start {
                    while points[pointIndex].instant < start { pointIndex += 1 }
                    if points[pointIndex].rank == rank { sink.point(at: start, value: c.values[row]) }
                }
            }
        }
        return true
    }

    /// Hands the parts of `[from, to)` outside the coverage intervals `covered[coverage]` (sorted, disjoint,
    /// the first ending after `from`) to `sink` at the sample's rate.
    private static func handPieces<Sink: MergeSink>(
        from: Timestamp, to: Timestamp, value: Double, covered: [TimeSpan], coverage: Range<Int>,
        into sink: inout Sink
    ) {
        let rate = value / Double(to - from)
        var uncovered = from
        var index = coverage.lowerBound
        while index < coverage.upperBound, covered[index].start < to {
            if covered[index].start > uncovered {
                sink.segment(from: uncovered, to: covered[index].start, rate: rate)
            }
            uncovered = max(uncovered, covered[index].end)
            index += 1
        }
        if uncovered < to { sink.segment(from: uncovered, to: to, rate: rate) }
    }
}

/// A half-open stretch of time `[start, end)`.
struct TimeSpan: Equatable {
    var start: Timestamp
    var end: Timestamp
}

/// What the layered merge learns in its first pass: per present rank, the coverage of the ranks above it, and the
/// best rank among the points at each instant holding one.
struct RankLayers {
    /// The highest-priority rank present: nothing covers its samples.
    let topRank: Int
    /// Every rank's coverage, one after the other: sorted, disjoint, non-touching intervals.
    let covered: [TimeSpan]
    /// Per rank, where its coverage starts and ends in ``covered`` (empty for ranks not present).
    let coverageStart: [Int]
    let coverageEnd: [Int]
    /// Instants holding point samples, ascending, with the best (lowest) rank of the points there.
    let points: [(instant: Timestamp, rank: Int)]

    /// Nil when the selection is empty or holds more than ``SourceMerge/layerRankLimit`` ranks.
    init?(_ c: Columns, _ selection: Selection, sourceRanks: [Int], rankCount: Int) {
        // Per rank, the union interval still open: [openStart, openEnd).
        var openStart = [Timestamp](repeating: .min, count: rankCount)
        var openEnd = [Timestamp](repeating: .min, count: rankCount)
        var unions = [[TimeSpan]](repeating: [], count: rankCount)
        var present: [Int] = []
        var isPresent = [Bool](repeating: false, count: rankCount)
        var points: [(instant: Timestamp, rank: Int)] = []
        for run in selection.runs {
            for row in run {
                let rank = sourceRanks[Int(c.sourceIDs[row])]
                if !isPresent[rank] {
                    guard present.count < SourceMerge.layerRankLimit else { return nil }
                    isPresent[rank] = true
                    present.append(rank)
                }
                let start = c.starts[row]
                let end = c.ends[row]
                if start < end {
                    if start <= openEnd[rank] {
                        if end > openEnd[rank] { openEnd[rank] = end }
                    } else {
                        if openStart[rank] < openEnd[rank] {
                            unions[rank].append(TimeSpan(start: openStart[rank], end: openEnd[rank]))
                        }
                        openStart[rank] = start
                        openEnd[rank] = end
                    }
                } else if let last = points.last, last.instant == start {
                    points[points.count - 1].rank = min(last.rank, rank)
                } else {
                    points.append((start, rank))
                }
            }
        }
        guard !present.isEmpty else { return nil }
        present.sort()
        var covered: [TimeSpan] = []
        var coverageStart = [Int](repeating: 0, count: rankCount)
        var coverageEnd = [Int](repeating: 0, count: rankCount)
        var above: [TimeSpan] = []
        for (index, rank) in present.enumerated() {
            if index > 0 {
                let previous = present[index - 1]
                if openStart[previous] < openEnd[previous] {
                    unions[previous].append(TimeSpan(start: openStart[previous], end: openEnd[previous]))
                }
                above = TimeSpan.union(above, unions[previous])
            }
            coverageStart[rank] = covered.count
            covered += above
            coverageEnd[rank] = covered.count
        }
        topRank = present[0]
        self.covered = covered
        self.coverageStart = coverageStart
        self.coverageEnd = coverageEnd
        self.points = points
    }
}

extension TimeSpan {
    /// The union of two sorted lists of disjoint intervals, touching intervals joined.
    static func union(_ a: [TimeSpan], _ b: [TimeSpan]) -> [TimeSpan] {
        var result: [TimeSpan] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            let next: TimeSpan
            if j == b.count || (i < a.count && a[i].start <= b[j].start) {
                next = a[i]
                i += 1
            } else {
                next = b[j]
                j += 1
            }
            if let last = result.last, next.start <= last.end {
                if next.end > last.end { result[result.count - 1].end = next.end }
            } else {
                result.append(next)
            }
        }
        return result
    }
}
