import HealthModel

/// The rows of a sealed block that start every ``step`` from the first, all last ``duration``, and whose values
/// are zero but for a few: per-minute step counts, zero in most minutes. Read from the columns' headers and the
/// values' exception list alone (``SealedBlock/sparseRegularRows(into:)``), without decoding a row, for
/// ``BucketSums``: the sums come out bit for bit as from the decoded rows (a zero adds nothing to a sum).
struct SparseRegularRows: SummedRows {
    var first: Timestamp = 0
    var step: Int64 = 0
    var duration: Int64 = 0
    var count = 0
    /// The rows whose value is not zero, ascending, and their values.
    var rows: [Int] = []
    var values: [Double] = []

    @inline(__always) func start(_ row: Int) -> Timestamp { first &+ Int64(row) &* step }
    @inline(__always) func end(_ row: Int) -> Timestamp { start(row) &+ duration }
    @inline(__always) func counts(_ row: Int) -> Bool { true }

    func value(_ row: Int) -> Double {
        let index = firstValue(atOrAfter: row)
        return index < rows.count && rows[index] == row ? values[index] : 0
    }

    func firstRow(in range: Range<Int>, startingAtLeast time: Timestamp) -> Int {
        guard !range.isEmpty, start(range.lowerBound) < time else { return range.lowerBound }
        guard step > 0 else { return range.upperBound }
        // The rows before `time` are those with first + row × step < time: row < ceil((time - first) / step).
        let (distance, overflow) = time.subtractingReportingOverflow(first)
        guard !overflow else { return range.upperBound }
        let below = distance / step + (distance % step == 0 ? 0 : 1)
        return below >= Int64(range.upperBound) ? range.upperBound : max(range.lowerBound, Int(below))
    }

    /// ``ValueSum``'s four accumulators over the rows, each non-zero value added where the row-by-row loop adds
    /// it: rows in whole groups of four to the accumulator of their place in the group, the rest to the first.
    func sum(_ range: Range<Int>) -> Double {
        var a = (0.0, 0.0, 0.0, 0.0)
        let grouped = range.lowerBound + (range.count / 4) * 4
        var index = firstValue(atOrAfter: range.lowerBound)
        // The accumulator is picked by index, not by a branch per row (the rows' places are random).
        withUnsafeMutablePointer(to: &a) { tuple in
            tuple.withMemoryRebound(to: Double.self, capacity: 4) { accumulators in
                while index < rows.count, rows[index] < range.upperBound {
                    let row = rows[index]
                    accumulators[row < grouped ? (row - range.lowerBound) & 3 : 0] += values[index]
                    index += 1
                }
            }
        }
        return (a.0 + a.1) + (a.2 + a.3)
    }

    /// The index in ``rows`` of the first row at or after `row`.
    private func firstValue(atOrAfter row: Int) -> Int { rows.partitionPoint { $0 < row } }
}
