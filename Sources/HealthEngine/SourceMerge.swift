import HealthModel

/// The merged sum of a cumulative type over several sources (HEALTHKIT.md §8).
///
/// Time is cut into elementary segments at every sample boundary. In each segment the highest-priority source
/// among those with a sample covering it wins, and the pro-rated portions of the winner's samples there count;
/// other sources' portions are dropped. A stretch covered by one source counts in full. A sample without a
/// duration is an instant t: it counts when its source ranks at least as high as every source covering t (a
/// sample with a duration covers `[start, end)`, one without covers its own instant).
enum SourceMerge {
    /// Sweeps the selected rows in time order with the ranks of their sources (0 = highest priority, indexed by
    /// source id, every rank `< rankCount`). With a window, only portions inside it count (collection buckets);
    /// a plain statistics query passes `nil` and counts every selected sample's portions without clipping.
    static func sum(
        _ c: Columns, _ selection: Selection, sourceRanks: [Int], rankCount: Int, window: Range<Timestamp>?
    ) -> Double {
        let byStart = Array(selection.rows)
        var byEnd = byStart.filter { c.ends[$0] > c.starts[$0] }
        byEnd.sort { (c.ends[$0], $0) < (c.ends[$1], $1) }
        var active = [Int](repeating: 0, count: rankCount)
        // Per rank: the sum of value / duration over its active samples.
        var rate = [Double](repeating: 0, count: rankCount)
        var activeCount = 0

        func winningRank() -> Int? {
            guard activeCount > 0 else { return nil }
            return active.firstIndex { $0 > 0 }
        }

        var total = 0.0
        var previous = Timestamp.min
        var nextStart = 0
        var nextEnd = 0
        while nextStart < byStart.count || nextEnd < byEnd.count {
            let startTime = nextStart < byStart.count ? c.starts[byStart[nextStart]] : .max
            let endTime = nextEnd < byEnd.count ? c.ends[byEnd[nextEnd]] : .max
            let time = min(startTime, endTime)
            if time > previous, let winner = winningRank() {
                let length: Int64
                if let window {
                    length = max(0, min(time, window.upperBound) - max(previous, window.lowerBound))
                } else {
                    length = time - previous
                }
                total += rate[winner] * Double(length)
            }
            while nextEnd < byEnd.count, c.ends[byEnd[nextEnd]] == time {
                let row = byEnd[nextEnd]
                let rank = sourceRanks[Int(c.sourceIDs[row])]
                active[rank] -= 1
                activeCount -= 1
                rate[rank] = active[rank] == 0 ? 0 : rate[rank] - c.values[row] / Double(c.ends[row] - c.starts[row])
                nextEnd += 1
            }
            var pointRank = Int.max
            var pointSum = 0.0
            while nextStart < byStart.count, c.starts[byStart[nextStart]] == time {
                let row = byStart[nextStart]
                let rank = sourceRanks[Int(c.sourceIDs[row])]
                if c.ends[row] > time {
                    active[rank] += 1
                    activeCount += 1
                    rate[rank] += c.values[row] / Double(c.ends[row] - time)
                } else if rank < pointRank {
                    (pointRank, pointSum) = (rank, c.values[row])
                } else if rank == pointRank {
                    pointSum += c.values[row]
                }
                nextStart += 1
            }
            if pointRank != .max, pointRank <= (winningRank() ?? .max), window?.contains(time) ?? true {
                total += pointSum
            }
            previous = time
        }
        return total
    }
}
