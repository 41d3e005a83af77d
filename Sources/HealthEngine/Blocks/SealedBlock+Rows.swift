import HealthModel

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
        append(
            starts: &rows.starts, ends: &rows.ends, values: &rows.values, sourceIDs: &rows.sourceIDs,
            arrivals: &rows.arrivals)
    }

    /// Decodes every row of the block onto the ends of these columns (of equal lengths): how a reader of
    /// snapshots fills a series image.
    public func append(
        starts: inout ContiguousArray<Timestamp>, ends: inout ContiguousArray<Timestamp>,
        values: inout ContiguousArray<Double>, sourceIDs: inout ContiguousArray<UInt16>,
        arrivals: inout ContiguousArray<UInt64>
    ) {
        let first = arrivals.count
        arrivals.append(contentsOf: repeatElement(0, count: count))
        arrivals.withUnsafeMutableBufferPointer { a in
            append(
                starts: &starts, ends: &ends, values: &values, sourceIDs: &sourceIDs, arrivals: a.baseAddress! + first)
        }
    }

    /// Decodes the starts, ends, values and source ids of every row onto the ends of these columns (of equal
    /// lengths), and the arrivals to `arrivals` when given (room for ``count`` of them).
    func append(
        starts: inout ContiguousArray<Timestamp>, ends: inout ContiguousArray<Timestamp>,
        values: inout ContiguousArray<Double>, sourceIDs: inout ContiguousArray<UInt16>,
        arrivals: UnsafeMutablePointer<UInt64>? = nil
    ) {
        let n = count
        let first = starts.count
        starts.append(contentsOf: repeatElement(0, count: n))
        ends.append(contentsOf: repeatElement(0, count: n))
        values.append(contentsOf: repeatElement(0, count: n))
        sourceIDs.append(contentsOf: repeatElement(0, count: n))
        starts.withUnsafeMutableBufferPointer { s in
            ends.withUnsafeMutableBufferPointer { e in
                values.withUnsafeMutableBufferPointer { v in
                    sourceIDs.withUnsafeMutableBufferPointer { ids in
                        decode(
                            into: BlockBuffers(
                                starts: s.baseAddress! + first, ends: e.baseAddress! + first,
                                values: v.baseAddress! + first, sourceIDs: ids.baseAddress! + first,
                                arrivals: arrivals))
                    }
                }
            }
        }
    }
}
