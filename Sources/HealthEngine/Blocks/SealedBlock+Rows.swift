/// Sealed blocks to and from ``SeriesRows``: what the engine and the tests move in and out of blocks.
extension SealedBlock {
    /// Encodes rows `range` of `rows` (see ``init(encoding:)`` for what they must be).
    init(encoding rows: SeriesRows, range: Range<Int>) {
        self = rows.starts.withUnsafeBufferPointer { s in
            rows.ends.withUnsafeBufferPointer { e in
                rows.values.withUnsafeBufferPointer { v in
                    rows.sourceIDs.withUnsafeBufferPointer { ids in
                        rows.arrivals.withUnsafeBufferPointer { a in
                            SealedBlock(
                                encoding: BlockColumns(
                                    starts: UnsafeBufferPointer(rebasing: s[range]),
                                    ends: UnsafeBufferPointer(rebasing: e[range]),
                                    values: UnsafeBufferPointer(rebasing: v[range]),
                                    sourceIDs: UnsafeBufferPointer(rebasing: ids[range]),
                                    arrivals: UnsafeBufferPointer(rebasing: a[range])))
                        }
                    }
                }
            }
        }
    }

    /// Every row of the block, decoded.
    func rows() -> SeriesRows {
        var rows = SeriesRows()
        appendRows(to: &rows)
        return rows
    }

    /// Decodes every row of the block onto the end of `rows`.
    func appendRows(to rows: inout SeriesRows) {
        let n = count
        let first = rows.count
        rows.starts.append(contentsOf: repeatElement(0, count: n))
        rows.ends.append(contentsOf: repeatElement(0, count: n))
        rows.values.append(contentsOf: repeatElement(0, count: n))
        rows.sourceIDs.append(contentsOf: repeatElement(0, count: n))
        rows.arrivals.append(contentsOf: repeatElement(0, count: n))
        rows.starts.withUnsafeMutableBufferPointer { s in
            rows.ends.withUnsafeMutableBufferPointer { e in
                rows.values.withUnsafeMutableBufferPointer { v in
                    rows.sourceIDs.withUnsafeMutableBufferPointer { ids in
                        rows.arrivals.withUnsafeMutableBufferPointer { a in
                            decode(
                                into: BlockBuffers(
                                    starts: s.baseAddress! + first, ends: e.baseAddress! + first,
                                    values: v.baseAddress! + first, sourceIDs: ids.baseAddress! + first,
                                    arrivals: a.baseAddress! + first))
                        }
                    }
                }
            }
        }
    }
}
