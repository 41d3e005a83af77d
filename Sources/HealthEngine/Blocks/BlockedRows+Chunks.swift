import HealthModel

extension BlockedRows {
    /// Runs `body` on each block (decoded into one reused buffer) and then on the head, in start order, as
    /// ``Columns`` of that chunk alone with the row number of its first row: how code written against a series'
    /// columns reads blocked rows, one chunk at a time. `include` may skip a block by its summary (nil: all).
    func forEachChunk(
        including include: ((BlockSummary) -> Bool)? = nil, _ body: (Columns, _ firstRow: Int) -> Void
    ) {
        let scratch = BlockScratch(capacity: blocks.reduce(0) { max($0, $1.count) })
        let wanted = BlockBuffers(
            starts: scratch.starts, ends: scratch.ends, values: scratch.values, sourceIDs: scratch.sourceIDs)
        for (index, block) in blocks.enumerated() where include?(block.summary) ?? true {
            block.decode(into: wanted)
            let rows = scratch.rows(block.count)
            body(
                Columns(starts: rows.starts, ends: rows.ends, values: rows.values, sourceIDs: rows.sourceIDs),
                firstRows[index])
        }
        guard head.count > 0 else { return }
        head.starts.withUnsafeBufferPointer { s in
            head.ends.withUnsafeBufferPointer { e in
                head.values.withUnsafeBufferPointer { v in
                    head.sourceIDs.withUnsafeBufferPointer { ids in
                        body(Columns(starts: s, ends: e, values: v, sourceIDs: ids), sealedCount)
                    }
                }
            }
        }
    }
}
