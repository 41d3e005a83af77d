import HealthModel

/// Count, sum, extremes and time span of the rows a date predicate selects: the figures a statistics query
/// reads, as ``BlockedRows/figures(_:)`` computes them from block summaries and decoded edge blocks.
struct RangeFigures: Equatable, Sendable {
    var count = 0
    var sum = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity
    var earliestStart = Timestamp.max
    var latestEnd = Timestamp.min

    /// Adds one row.
    mutating func add(start: Timestamp, end: Timestamp, value: Double) {
        count += 1
        sum += value
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
        earliestStart = Swift.min(earliestStart, start)
        latestEnd = Swift.max(latestEnd, end)
    }

    /// Adds a whole block by its summary.
    mutating func add(_ summary: BlockSummary) {
        count += summary.count
        sum += summary.sum
        minimum = Swift.min(minimum, summary.minimum)
        maximum = Swift.max(maximum, summary.maximum)
        earliestStart = Swift.min(earliestStart, summary.firstStart)
        latestEnd = Swift.max(latestEnd, summary.latestEnd)
    }
}

/// How a block's rows relate to a date predicate, judged from its summary alone.
enum BlockCoverage {
    /// No row can match.
    case none
    /// Every row matches.
    case all
    /// Some rows may match: decode and test each.
    case some

    /// The coverage of a block by `date` (HEALTHKIT.md §4: without strict start a sample matches when it ends at
    /// or after S; ends are never before starts, so the first start bounds the ends from below).
    init(_ summary: BlockSummary, _ date: DatePredicate) {
        if let e = date.end, summary.firstStart >= e {
            self = .none
            return
        }
        if let s = date.start, date.strictStartDate ? summary.lastStart < s : summary.latestEnd < s {
            self = .none
            return
        }
        let startsInside = date.start.map { summary.firstStart >= $0 } ?? true
        let endsInside =
            date.end.map { e in summary.lastStart < e && (!date.strictEndDate || summary.latestEnd < e) } ?? true
        self = startsInside && endsInside ? .all : .some
    }
}

extension BlockedRows {
    /// The figures of the rows `date` selects (every source): blocks wholly selected count by their summaries;
    /// only the blocks at the edges of the range are decoded.
    func figures(_ date: DatePredicate) -> RangeFigures {
        var figures = RangeFigures()
        let coverage = blocks.map { BlockCoverage($0.summary, date) }
        for (block, cover) in zip(blocks, coverage) where cover == .all { figures.add(block.summary) }
        var index = 0
        forEachChunk(
            including: { _ in
                defer { index += 1 }
                return coverage[index] == .some
            }
        ) { c, _ in
            for row in 0..<c.starts.count where date.matches(start: c.starts[row], end: c.ends[row]) {
                figures.add(start: c.starts[row], end: c.ends[row], value: c.values[row])
            }
        }
        return figures
    }

    /// The sum of the values pro-rated to each bucket `[boundaries[i], boundaries[i + 1])` (one source, as
    /// ``ProratedSum`` counts a bucket): a block lying wholly inside one bucket adds its summary's sum; the
    /// others are decoded and their rows spread over the buckets they overlap.
    func bucketSums(_ boundaries: [Timestamp]) -> [Double] {
        var sums = [Double](repeating: 0, count: max(boundaries.count - 1, 0))
        guard !sums.isEmpty else { return sums }
        /// The bucket holding `instant`, or nil outside them all.
        func bucket(_ instant: Timestamp) -> Int? {
            guard instant >= boundaries[0], instant < boundaries[boundaries.count - 1] else { return nil }
            var low = 0
            var high = boundaries.count - 1
            while low + 1 < high {
                let middle = (low + high) / 2
                if boundaries[middle] <= instant { low = middle } else { high = middle }
            }
            return low
        }
        var decode = [Bool](repeating: true, count: blocks.count)
        for (index, block) in blocks.enumerated() {
            let s = block.summary
            if let b = bucket(s.firstStart), s.lastStart < boundaries[b + 1], s.latestEnd <= boundaries[b + 1] {
                sums[b] += s.sum
                decode[index] = false
            } else if s.latestEnd < boundaries[0] || s.firstStart >= boundaries[boundaries.count - 1] {
                decode[index] = false
            }
        }
        var index = 0
        forEachChunk(
            including: { _ in
                defer { index += 1 }
                return decode[index]
            }
        ) { c, _ in
            for row in 0..<c.starts.count {
                let start = c.starts[row]
                let end = c.ends[row]
                if start == end {
                    if let b = bucket(start) { sums[b] += c.values[row] }
                    continue
                }
                var b = bucket(max(start, boundaries[0])) ?? sums.count
                while b < sums.count, boundaries[b] < end {
                    let overlap = min(end, boundaries[b + 1]) - max(start, boundaries[b])
                    if overlap > 0 { sums[b] += c.values[row] * (Double(overlap) / Double(end - start)) }
                    b += 1
                }
            }
        }
        return sums
    }
}
