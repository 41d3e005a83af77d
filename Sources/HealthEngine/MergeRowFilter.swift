import HealthModel

/// Which rows of a run count in full when a merge sink sums the run in bulk (HEALTHKIT.md §8).
protocol MergeRowFilter {
    /// Whether `row` counts.
    func counts(_ c: Columns, _ row: Int) -> Bool
    /// The plain sum of the values of the rows that count.
    func sum(_ c: Columns, _ rows: Range<Int>) -> Double
}

/// Every row counts: the single-source path.
struct EveryRow: MergeRowFilter {
    @inline(__always)
    func counts(_ c: Columns, _ row: Int) -> Bool { true }

    func sum(_ c: Columns, _ rows: Range<Int>) -> Double {
        var plain = ValueSum()
        plain.add(c, rows)
        return plain.total
    }
}

/// The rows whose source's priority layer is in a set: those nothing of a higher priority covers in a stretch.
struct LayerFilter: MergeRowFilter {
    /// Layer of each source id (valid only while the merge that made it runs).
    let layerOfSource: UnsafeBufferPointer<UInt8>
    /// Bit `l` set: rows of layer `l` count.
    let counting: UInt32

    @inline(__always)
    func counts(_ c: Columns, _ row: Int) -> Bool {
        counting >> UInt32(layerOfSource[Int(c.sourceIDs[row])]) & 1 != 0
    }

    /// Four accumulators and a branch-free select, as ``ValueSum``.
    func sum(_ c: Columns, _ rows: Range<Int>) -> Double {
        var a0 = 0.0
        var a1 = 0.0
        var a2 = 0.0
        var a3 = 0.0
        var row = rows.lowerBound
        while row + 4 <= rows.upperBound {
            a0 += counts(c, row) ? c.values[row] : 0
            a1 += counts(c, row + 1) ? c.values[row + 1] : 0
            a2 += counts(c, row + 2) ? c.values[row + 2] : 0
            a3 += counts(c, row + 3) ? c.values[row + 3] : 0
            row += 4
        }
        while row < rows.upperBound {
            a0 += counts(c, row) ? c.values[row] : 0
            row += 1
        }
        return (a0 + a1) + (a2 + a3)
    }
}
