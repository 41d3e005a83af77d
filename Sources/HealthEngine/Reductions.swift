import Foundation
import HealthModel

// Reductions over runs of rows of a series. Each keeps its state across calls, so a query feeds it the runs of a
// Selection in order (and a collection query, later, the runs of each bucket). None allocates.

/// Plain sum of the values, with four accumulators to break the chain of dependent adds.
struct ValueSum {
    private(set) var total = 0.0

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        var a0 = 0.0
        var a1 = 0.0
        var a2 = 0.0
        var a3 = 0.0
        var row = rows.lowerBound
        while row + 4 <= rows.upperBound {
            a0 += c.values[row]
            a1 += c.values[row + 1]
            a2 += c.values[row + 2]
            a3 += c.values[row + 3]
            row += 4
        }
        while row < rows.upperBound {
            a0 += c.values[row]
            row += 1
        }
        total += (a0 + a1) + (a2 + a3)
    }

    /// Adds a whole block by its summary's sum, which is what ``add(_:_:)`` adds for the block's rows as one run.
    mutating func add(_ summary: BlockSummary) { total += summary.sum }
}

/// Sum of the values pro-rated to a window: a sample with a duration gives the share of its value that its
/// overlap with `[window.lowerBound, window.upperBound)` represents; a sample without one counts in full when its
/// instant lies in the window. This is what a collection bucket counts from a single source.
struct ProratedSum {
    let window: Range<Timestamp>
    private(set) var total = 0.0

    init(window: Range<Timestamp>) { self.window = window }

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        var sum = 0.0
        for row in rows {
            let start = c.starts[row]
            let end = c.ends[row]
            if start == end {
                if window.contains(start) { sum += c.values[row] }
            } else {
                let overlap = min(end, window.upperBound) - max(start, window.lowerBound)
                if overlap > 0 { sum += c.values[row] * (Double(overlap) / Double(end - start)) }
            }
        }
        total += sum
    }
}

/// Smallest and largest value, in four lanes so the compares do not wait on each other.
struct ValueExtremes {
    private(set) var minimum = Double.infinity
    private(set) var maximum = -Double.infinity

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        var low = (minimum, minimum, minimum, minimum)
        var high = (maximum, maximum, maximum, maximum)
        var row = rows.lowerBound
        while row + 4 <= rows.upperBound {
            let v = (c.values[row], c.values[row + 1], c.values[row + 2], c.values[row + 3])
            low = (
                v.0 < low.0 ? v.0 : low.0, v.1 < low.1 ? v.1 : low.1, v.2 < low.2 ? v.2 : low.2,
                v.3 < low.3 ? v.3 : low.3
            )
            high = (
                v.0 > high.0 ? v.0 : high.0, v.1 > high.1 ? v.1 : high.1, v.2 > high.2 ? v.2 : high.2,
                v.3 > high.3 ? v.3 : high.3
            )
            row += 4
        }
        while row < rows.upperBound {
            let value = c.values[row]
            low.0 = value < low.0 ? value : low.0
            high.0 = value > high.0 ? value : high.0
            row += 1
        }
        minimum = min(min(low.0, low.1), min(low.2, low.3))
        maximum = max(max(high.0, high.1), max(high.2, high.3))
    }

    /// Adds a whole block by its summary.
    mutating func add(_ summary: BlockSummary) {
        minimum = min(minimum, summary.minimum)
        maximum = max(maximum, summary.maximum)
    }
}

/// The most recent sample: latest end, ties broken by latest start, then by the row stored last.
///
/// Each run is scanned backwards and the scan stops once `start + maxDuration` falls before the best end found
/// (no earlier row can end later), so on typical data only the last few rows of a run are read.
/// Rows are numbered `offset` plus their index in `c`, so chunks of a series (each its own columns) compare by
/// their row numbers in the series; the value is kept with the row.
struct LatestSample {
    let maxDuration: Int64
    private(set) var row = -1
    private(set) var start = Timestamp.min
    private(set) var end = Timestamp.min
    private(set) var value = 0.0

    init(maxDuration: Int64) { self.maxDuration = maxDuration }

    /// Takes a whole block's latest end from its summary: enough for ``end``, not for the most recent row.
    mutating func add(_ summary: BlockSummary) { end = max(end, summary.latestEnd) }

    mutating func add(_ c: Columns, _ rows: Range<Int>, offset: Int = 0) {
        var (row, start, end, value) = (row, start, end, value)
        defer { (self.row, self.start, self.end, self.value) = (row, start, end, value) }
        var candidate = rows.upperBound
        while candidate > rows.lowerBound {
            candidate -= 1
            let candidateStart = c.starts[candidate]
            let (latestPossibleEnd, overflow) = candidateStart.addingReportingOverflow(maxDuration)
            if !overflow, latestPossibleEnd < end { break }
            let candidateEnd = c.ends[candidate]
            if (candidateEnd, candidateStart, candidate + offset) > (end, start, row) {
                row = candidate + offset
                start = candidateStart
                end = candidateEnd
                value = c.values[candidate]
            }
        }
    }
}

/// Time covered by the samples, overlaps counted once (rows must come in start order).
struct CoveredTime {
    private var total: Int64 = 0
    private var spanStart: Timestamp = 0
    private var spanEnd: Timestamp = 0
    private var hasSpan = false

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        guard let first = rows.first else { return }
        if !hasSpan { (spanStart, spanEnd, hasSpan) = (c.starts[first], c.ends[first], true) }
        var (total, spanStart, spanEnd) = (self.total, self.spanStart, self.spanEnd)
        for row in rows {
            let start = c.starts[row]
            let end = c.ends[row]
            if start > spanEnd {
                total += spanEnd - spanStart
                (spanStart, spanEnd) = (start, end)
            } else if end > spanEnd {
                spanEnd = end
            }
        }
        (self.total, self.spanStart, self.spanEnd) = (total, spanStart, spanEnd)
    }

    /// Covered microseconds so far.
    var microseconds: Int64 { total + (hasSpan ? spanEnd - spanStart : 0) }
}

/// HealthKit's time-weighted mean for heart rate (HEALTHKIT.md §5), with rows in start order.
///
/// A sample with a duration weighs its duration (value × duration). Point readings (start = end) form a chain in
/// time order: the first stands for 22.5 s before it and the last for 22.5 s after it; two consecutive readings
/// at most 45 s apart are joined by a trapezoid over the gap (area gap × mean of the two, weight gap); readings
/// further apart stand for 22.5 s each on the sides facing the gap. So an isolated reading weighs 45 s, and a
/// burst of readings weighs its time span plus 45 s. At a 45 s gap the trapezoid and the two half windows weigh
/// the same, so the mean is continuous in the gap. Samples with a duration neither break nor join the chain.
struct TimeWeightedMean {
    static let halfWindow: Int64 = 22_500_000
    static let joinGap: Int64 = 45 * Micros.second

    /// Σ value × microseconds.
    private var area = 0.0
    /// Σ microseconds, as a `Double`: exact up to 2⁵³ µs (285 years of weight), and it cannot overflow however
    /// many long samples add up (an `Int64` sum of 29 samples spanning ``SupportedInstants`` would).
    private var weight = 0.0
    private var hasPoint = false
    private var lastTime: Timestamp = 0
    private var lastValue = 0.0

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        guard let first = rows.first else { return }
        // State in locals, so the loop keeps it in registers rather than in `self`.
        var (area, weight, lastTime, lastValue) = (area, weight, lastTime, lastValue)
        var row = first
        if !hasPoint {
            // Skip to the first point reading, which opens the chain with its leading half window.
            while row < rows.upperBound, c.ends[row] > c.starts[row] {
                area += Double(c.ends[row] - c.starts[row]) * c.values[row]
                weight += Double(c.ends[row] - c.starts[row])
                row += 1
            }
            if row < rows.upperBound {
                (lastTime, lastValue) = (c.starts[row], c.values[row])
                area += Double(Self.halfWindow) * lastValue
                weight += Double(Self.halfWindow)
                hasPoint = true
                row += 1
            }
        }
        while row < rows.upperBound {
            let start = c.starts[row]
            let end = c.ends[row]
            let value = c.values[row]
            row += 1
            if end > start {
                area += Double(end - start) * value
                weight += Double(end - start)
                continue
            }
            let span = Self.linkSpan(gap: start - lastTime)
            area += span * 0.5 * (lastValue + value)
            weight += span
            lastTime = start
            lastValue = value
        }
        (self.area, self.weight, self.lastTime, self.lastValue) = (area, weight, lastTime, lastValue)
    }

    /// The weight of what joins a point reading to the next one `gap` microseconds later, at the mean of their
    /// values: joined (`gap` ≤ ``joinGap``) the trapezoid's width, apart a half window on each side of the gap.
    @inline(__always)
    static func linkSpan(gap: Int64) -> Double { Double(gap <= joinGap ? gap : 2 * halfWindow) }

    /// Feeds a whole block's rows by their ``TimeWeightedPartial``: the link from the chain so far to the
    /// block's first point reading (or the chain's opening half window), then the block's own area and weight.
    /// Equal to feeding the rows one by one up to the order of the floating-point additions of the area (the
    /// weights are whole microseconds, exact in any order).
    mutating func add(_ partial: TimeWeightedPartial) {
        if partial.hasPoint {
            if hasPoint {
                let span = Self.linkSpan(gap: partial.firstTime - lastTime)
                area += span * 0.5 * (lastValue + partial.firstValue)
                weight += span
            } else {
                area += Double(Self.halfWindow) * partial.firstValue
                weight += Double(Self.halfWindow)
                hasPoint = true
            }
            (lastTime, lastValue) = (partial.lastTime, partial.lastValue)
        }
        area += partial.area
        weight += partial.weight
    }

    /// The mean, closing the chain with the last reading's trailing half window; `nil` when nothing was fed.
    var mean: Double? {
        let closedArea = area + (hasPoint ? Double(Self.halfWindow) * lastValue : 0)
        let closedWeight = weight + (hasPoint ? Double(Self.halfWindow) : 0)
        return closedWeight > 0 ? closedArea / closedWeight : nil
    }
}

/// What one block's rows add to a ``TimeWeightedMean``, apart from the link to the chain before them: the
/// area and weight of its samples with a duration and of the joins between its consecutive point readings,
/// and its first and last point reading. Kept in memory with each block's summary
/// (``BlockSummary/timeWeighted``), so a statistics query counts whole blocks without decoding them.
struct TimeWeightedPartial: Sendable {
    /// Σ value × microseconds of the block's own terms (durations, and joins between its points).
    private(set) var area = 0.0
    /// Σ microseconds of the same terms.
    private(set) var weight = 0.0
    /// Whether the block holds a point reading (start = end); the first and last one's instant and value.
    private(set) var hasPoint = false
    private(set) var firstTime: Timestamp = 0
    private(set) var firstValue = 0.0
    private(set) var lastTime: Timestamp = 0
    private(set) var lastValue = 0.0

    /// The partial of rows in start order (columns of equal lengths). Blocks seal any bits (a snapshot's rows are
    /// checked after), so the differences wrap instead of trapping; rows that keep the engine's invariants never
    /// wrap.
    init(
        _ starts: UnsafeBufferPointer<Timestamp>, _ ends: UnsafeBufferPointer<Timestamp>,
        _ values: UnsafeBufferPointer<Double>
    ) {
        var (area, weight, lastTime, lastValue) = (0.0, 0.0, Timestamp(0), 0.0)
        for row in 0..<starts.count {
            let start = starts[row]
            let end = ends[row]
            let value = values[row]
            if end > start {
                area += Double(end &- start) * value
                weight += Double(end &- start)
            } else if !hasPoint {
                hasPoint = true
                (firstTime, firstValue) = (start, value)
                (lastTime, lastValue) = (start, value)
            } else {
                let span = TimeWeightedMean.linkSpan(gap: start &- lastTime)
                area += span * 0.5 * (lastValue + value)
                weight += span
                (lastTime, lastValue) = (start, value)
            }
        }
        (self.area, self.weight, self.lastTime, self.lastValue) = (area, weight, lastTime, lastValue)
    }
}

/// Energy average of sound levels (HEALTHKIT.md §5): `10·log10(Σ tᵢ·10^(Lᵢ/10) / Σ tᵢ)`, tᵢ each duration.
///
/// A sample without a duration weighs one microsecond (the clock's resolution): it barely moves an average of
/// real exposures, and an average of point readings alone is their plain energy mean. The sum is kept relative
/// to the highest level seen, so loud values cannot overflow.
struct EnergyAverage {
    private var reference = -Double.infinity
    private var energy = 0.0
    private var time = 0.0

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        var (reference, energy, time) = (reference, energy, time)
        for row in rows {
            let weight = Double(max(c.ends[row] - c.starts[row], 1))
            let level = c.values[row]
            if level > reference {
                energy *= pow(10, (reference - level) / 10)
                reference = level
            }
            energy += weight * pow(10, (level - reference) / 10)
            time += weight
        }
        (self.reference, self.energy, self.time) = (reference, energy, time)
    }

    /// The equivalent continuous level; `nil` when nothing was fed.
    var level: Double? { time > 0 ? reference + 10 * log10(energy / time) : nil }
}
