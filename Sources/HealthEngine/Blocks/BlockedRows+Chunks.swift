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

extension BlockedRows {
    /// Runs `body` on each block holding a row of `span` (decoded into one reused buffer) and then on the head
    /// when it holds one, in start order, as ``Columns`` of that whole chunk with the row number of its first row.
    /// `decodes` is asked first for each block (its first row, and the block): false skips it (a caller that used
    /// its summary, or read it otherwise). Without `sourceIDs`, blocks' source ids are not decoded and the chunks' ``Columns``
    /// hold none (a reader of one source's values: sums).
    func forEachChunk(
        overlapping span: Range<Int>, sourceIDs: Bool = true,
        decodes: (_ firstRow: Int, SealedBlock) -> Bool = { _, _ in true },
        _ body: (Columns, _ firstRow: Int) -> Void
    ) {
        guard !span.isEmpty else { return }
        var index = span.lowerBound < sealedCount ? blockIndex(ofRow: span.lowerBound) : blocks.count
        if index < blocks.count {
            var last = index
            while last + 1 < blocks.count, firstRows[last + 1] < span.upperBound { last += 1 }
            let scratch = BlockScratch(capacity: blocks[index...last].reduce(0) { max($0, $1.count) })
            let wanted = BlockBuffers(
                starts: scratch.starts, ends: scratch.ends, values: scratch.values,
                sourceIDs: sourceIDs ? scratch.sourceIDs : nil)
            while index <= last {
                let block = blocks[index]
                guard decodes(firstRows[index], block) else {
                    index += 1
                    continue
                }
                block.decode(into: wanted)
                let rows = scratch.rows(block.count)
                body(
                    Columns(
                        starts: rows.starts, ends: rows.ends, values: rows.values,
                        sourceIDs: sourceIDs ? rows.sourceIDs : UnsafeBufferPointer(start: scratch.sourceIDs, count: 0)),
                    firstRows[index])
                index += 1
            }
        }
        guard span.upperBound > sealedCount else { return }
        head.withColumns { body($0, sealedCount) }
    }

    /// The source ids of the rows in `span`, as far as the blocks' summaries tell (each block holding one of
    /// them adds every source it holds) and the head's rows in it.
    func sourceIDs(in span: Range<Int>) -> Set<UInt16> {
        var ids = Set<UInt16>()
        guard !span.isEmpty else { return ids }
        var index = span.lowerBound < sealedCount ? blockIndex(ofRow: span.lowerBound) : blocks.count
        while index < blocks.count, firstRows[index] < span.upperBound {
            ids.formUnion(blocks[index].summary.sources)
            index += 1
        }
        if span.upperBound > sealedCount {
            for row in max(span.lowerBound, sealedCount)..<span.upperBound {
                ids.insert(head.sourceIDs[row - sealedCount])
            }
        }
        return ids
    }
}

extension BlockedRows {
    /// ``forEachChunk(overlapping:decodes:_:)`` from the last chunk back to the first, until `body` returns false.
    func forEachChunkBackwards(overlapping span: Range<Int>, _ body: (Columns, _ firstRow: Int) -> Bool) {
        guard !span.isEmpty else { return }
        if span.upperBound > sealedCount, !head.withColumns({ body($0, sealedCount) }) { return }
        guard span.lowerBound < sealedCount else { return }
        let first = blockIndex(ofRow: span.lowerBound)
        var index = blockIndex(ofRow: min(span.upperBound, sealedCount) - 1)
        let scratch = BlockScratch(capacity: blocks[first...index].reduce(0) { max($0, $1.count) })
        let wanted = BlockBuffers(
            starts: scratch.starts, ends: scratch.ends, values: scratch.values, sourceIDs: scratch.sourceIDs)
        while index >= first {
            let block = blocks[index]
            block.decode(into: wanted)
            let rows = scratch.rows(block.count)
            let columns = Columns(
                starts: rows.starts, ends: rows.ends, values: rows.values, sourceIDs: rows.sourceIDs)
            guard body(columns, firstRows[index]) else { return }
            index -= 1
        }
    }
}
