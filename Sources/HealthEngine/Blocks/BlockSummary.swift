import HealthModel

/// What a sealed block's rows add up to, kept beside the compressed columns so a query over a range that
/// covers the whole block needs none of them.
public struct BlockSummary: Equatable, Sendable {
    /// Rows in the block (at least one).
    public var count: Int
    /// Sum of the values, in the order of ``ValueSum`` (four accumulators over the block's rows).
    public var sum: Double
    /// Smallest and largest value.
    public var minimum: Double
    public var maximum: Double
    /// Start of the first and of the last row (rows are in start order).
    public var firstStart: Timestamp
    public var lastStart: Timestamp
    /// The latest end of any row.
    public var latestEnd: Timestamp
    /// The longest `end - start` of any row.
    public var longestDuration: Int64
    /// The source ids present, ascending and distinct.
    public var sources: [UInt16]
    /// The block's share of the time-weighted mean (``TimeWeightedMean``), when the rows were at hand: computed
    /// when a block is sealed or read back (its rows are decoded then anyway), never stored in the block's bytes,
    /// and not compared by `==` (it follows from the rows).
    var timeWeighted: TimeWeightedPartial?

    /// Equal field by field, doubles bit for bit (a sum that overflowed to NaN equals itself).
    public static func == (a: BlockSummary, b: BlockSummary) -> Bool {
        a.count == b.count && a.sum.bitPattern == b.sum.bitPattern && a.minimum.bitPattern == b.minimum.bitPattern
            && a.maximum.bitPattern == b.maximum.bitPattern && a.firstStart == b.firstStart
            && a.lastStart == b.lastStart && a.latestEnd == b.latestEnd && a.longestDuration == b.longestDuration
            && a.sources == b.sources
    }

    /// Whether every row comes from one source.
    public var isSingleSource: Bool { sources.count == 1 }

    /// The summary of `rows` (at least one row).
    init(_ rows: BlockColumns) {
        count = rows.count
        var total = (0.0, 0.0, 0.0, 0.0)
        var low = Double.infinity
        var high = -Double.infinity
        var latestEnd = Timestamp.min
        var longest = Int64.min
        var row = 0
        let v = rows.values
        while row + 4 <= count {
            total = (total.0 + v[row], total.1 + v[row + 1], total.2 + v[row + 2], total.3 + v[row + 3])
            row += 4
        }
        while row < count {
            total.0 += v[row]
            row += 1
        }
        // Four lanes of minimum, maximum, latest end and longest duration, so no comparison waits on the one
        // before. Of equal values the first in row order is kept, as one pass keeps it: only zeros differ while
        // comparing equal, so a zero extreme is taken from the first zero.
        var lows = (low, low, low, low)
        var highs = (high, high, high, high)
        var ends = (latestEnd, latestEnd, latestEnd, latestEnd)
        var durations = (longest, longest, longest, longest)
        let (e, s) = (rows.ends, rows.starts)
        row = 0
        while row + 4 <= count {
            lows = (min(lows.0, v[row]), min(lows.1, v[row + 1]), min(lows.2, v[row + 2]), min(lows.3, v[row + 3]))
            highs = (
                max(highs.0, v[row]), max(highs.1, v[row + 1]), max(highs.2, v[row + 2]), max(highs.3, v[row + 3])
            )
            ends = (max(ends.0, e[row]), max(ends.1, e[row + 1]), max(ends.2, e[row + 2]), max(ends.3, e[row + 3]))
            durations = (
                max(durations.0, e[row] &- s[row]), max(durations.1, e[row + 1] &- s[row + 1]),
                max(durations.2, e[row + 2] &- s[row + 2]), max(durations.3, e[row + 3] &- s[row + 3])
            )
            row += 4
        }
        while row < count {
            lows.0 = min(lows.0, v[row])
            highs.0 = max(highs.0, v[row])
            ends.0 = max(ends.0, e[row])
            durations.0 = max(durations.0, e[row] &- s[row])
            row += 1
        }
        low = min(min(lows.0, lows.1), min(lows.2, lows.3))
        high = max(max(highs.0, highs.1), max(highs.2, highs.3))
        if low == 0 || high == 0, let zero = v.first(where: { $0 == 0 }) {
            if low == 0 { low = zero }
            if high == 0 { high = zero }
        }
        latestEnd = max(max(ends.0, ends.1), max(ends.2, ends.3))
        longest = max(max(durations.0, durations.1), max(durations.2, durations.3))
        var present = Set<UInt16>()
        var previousSource = rows.sourceIDs[0]
        present.insert(previousSource)
        for source in rows.sourceIDs where source != previousSource {
            present.insert(source)
            previousSource = source
        }
        sum = (total.0 + total.1) + (total.2 + total.3)
        minimum = low
        maximum = high
        firstStart = rows.starts[0]
        lastStart = rows.starts[count - 1]
        self.latestEnd = latestEnd
        longestDuration = longest
        self.sources = present.sorted()
        timeWeighted = TimeWeightedPartial(rows.starts, rows.ends, rows.values)
    }

    /// A summary as read from a block's header.
    init(
        count: Int, sum: Double, minimum: Double, maximum: Double, firstStart: Timestamp, lastStart: Timestamp,
        latestEnd: Timestamp, longestDuration: Int64, sources: [UInt16]
    ) {
        self.count = count
        self.sum = sum
        self.minimum = minimum
        self.maximum = maximum
        self.firstStart = firstStart
        self.lastStart = lastStart
        self.latestEnd = latestEnd
        self.longestDuration = longestDuration
        self.sources = sources
    }
}
