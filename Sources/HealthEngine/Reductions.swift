import Foundation
import HealthModel

// Reductions over runs of rows of a series. Each keeps its state across calls, so a query feeds it the runs of a
// Selection in order (and a collection query, later, the runs of each bucket). None allocates.

/// Earliest start and latest end of the rows fed (rows come in start order, so the first row has the earliest).
struct Extent {
    private(set) var start = Timestamp.max
    private(set) var end = Timestamp.min

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        guard !rows.isEmpty else { return }
        start = min(start, c.starts[rows.lowerBound])
        var latest = end
        for row in rows where c.ends[row] > latest { latest = c.ends[row] }
        end = latest
    }
}

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

/// Smallest and largest value.
struct ValueExtremes {
    private(set) var minimum = Double.infinity
    private(set) var maximum = -Double.infinity

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        var low = minimum
        var high = maximum
        for row in rows {
            let value = c.values[row]
            if value < low { low = value }
            if value > high { high = value }
        }
        minimum = low
        maximum = high
    }
}

/// The most recent sample: latest end, ties broken by latest start, then by the row stored last.
///
/// Each run is scanned backwards and the scan stops once `start + maxDuration` falls before the best end found
/// (no earlier row can end later), so on typical data only the last few rows of a run are read.
struct LatestSample {
    let maxDuration: Int64
    private(set) var row = -1
    private(set) var start = Timestamp.min
    private(set) var end = Timestamp.min

    init(maxDuration: Int64) { self.maxDuration = maxDuration }

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        var candidate = rows.upperBound
        while candidate > rows.lowerBound {
            candidate -= 1
            let candidateStart = c.starts[candidate]
            let (latestPossibleEnd, overflow) = candidateStart.addingReportingOverflow(maxDuration)
            if !overflow, latestPossibleEnd < end { break }
            let candidateEnd = c.ends[candidate]
            if (candidateEnd, candidateStart, candidate) > (end, start, row) {
                row = candidate
                start = candidateStart
                end = candidateEnd
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
        for row in rows {
            let start = c.starts[row]
            let end = c.ends[row]
            if !hasSpan {
                (spanStart, spanEnd, hasSpan) = (start, end, true)
            } else if start > spanEnd {
                total += spanEnd - spanStart
                (spanStart, spanEnd) = (start, end)
            } else if end > spanEnd {
                spanEnd = end
            }
        }
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
    static let halfWindow = 22.5e6
    static let joinGap: Int64 = 45 * Micros.second

    private var area = 0.0
    private var weight = 0.0
    private var hasPoint = false
    private var lastTime: Timestamp = 0
    private var lastValue = 0.0

    mutating func add(_ c: Columns, _ rows: Range<Int>) {
        for row in rows {
            let start = c.starts[row]
            let end = c.ends[row]
            let value = c.values[row]
            if end > start {
                let duration = Double(end - start)
                area += duration * value
                weight += duration
                continue
            }
            if !hasPoint {
                area += Self.halfWindow * value
                weight += Self.halfWindow
                hasPoint = true
            } else {
                let gap = start - lastTime
                if gap <= Self.joinGap {
                    area += Double(gap) * (lastValue + value) / 2
                    weight += Double(gap)
                } else {
                    area += Self.halfWindow * (lastValue + value)
                    weight += 2 * Self.halfWindow
                }
            }
            lastTime = start
            lastValue = value
        }
    }

    /// The mean, closing the chain with the last reading's trailing half window; `nil` when nothing was fed.
    var mean: Double? {
        let closedArea = area + (hasPoint ? Self.halfWindow * lastValue : 0)
        let closedWeight = weight + (hasPoint ? Self.halfWindow : 0)
        return closedWeight > 0 ? closedArea / closedWeight : nil
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
    }

    /// The equivalent continuous level; `nil` when nothing was fed.
    var level: Double? { time > 0 ? reference + 10 * log10(energy / time) : nil }
}
