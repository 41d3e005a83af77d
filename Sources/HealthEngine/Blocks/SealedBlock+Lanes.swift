import HealthModel

/// Laned blocks (version 2): the rows of several sources, each source's rows a version 1 block of its own, and
/// an order column (the rows' source ids, as a version 1 block's source column) that puts them back in start
/// order. Byte layout: Protocol/STORAGE.md, "Sealed blocks".
extension SealedBlock {
    /// Encodes rows of several sources (`summary` is theirs) as a laned block.
    init(laning rows: BlockColumns, summary: BlockSummary) {
        let n = rows.count
        let layout = LaneLayout(sources: summary.sources, rows: rows.sourceIDs)
        // Each lane's rows, one lane after the other, in row order within a lane.
        let gathered = BlockScratch(capacity: n)
        for row in 0..<n {
            let to = Int(layout.gather[row])
            gathered.starts[to] = rows.starts[row]
            gathered.ends[to] = rows.ends[row]
            gathered.values[to] = rows.values[row]
            gathered.sourceIDs[to] = rows.sourceIDs[row]
            gathered.arrivals[to] = rows.arrivals[row]
        }
        var writer = BlockWriter(capacity: 128 + n * 2)
        Self.writeHeader(Self.lanedVersion, summary, into: &writer)
        var offsets: [Int32] = []
        Self.appendColumn(to: &writer, offsets: &offsets) { SourceColumn.encode(rows.sourceIDs, into: &$0) }
        var lanes: [(BlockSummary, [Int32])] = []
        for lane in summary.sources.indices {
            let range = layout.firstRows[lane]..<layout.firstRows[lane + 1]
            let block = SealedBlock(encoding: gathered.rows(range))
            writer.varint(UInt64(block.byteCount))
            let shift = Int32(writer.bytes.count)
            writer.append(block.bytes)
            lanes.append((block.summary, block.columnOffsets.map { $0 + shift }))
        }
        self.init(owning: writer.bytes, summary: summary, columnOffsets: offsets, lanes: lanes)
    }

    /// ``decodeChecked(into:checkingLanes:)`` of a laned block: the order column, then each lane's columns that
    /// `buffers` asks for (ends need starts), put in row order. Throws when the order column names a source
    /// without a lane or gives a lane another number of rows than it holds.
    func decodeLanes(into buffers: BlockBuffers, checkingLanes: Bool) throws(BlockDecodingError) {
        let n = count
        let ids = buffers.sourceIDs ?? UnsafeMutablePointer<UInt16>.allocate(capacity: n)
        defer { if buffers.sourceIDs == nil { ids.deallocate() } }
        try withBytes { (raw) throws(BlockDecodingError) in
            var reader = column(0, raw)
            try SourceColumn.decode(&reader, count: n, into: ids)
            guard reader.remaining == 0 else { throw BlockDecodingError("bytes left in the order column") }
        }
        let layout = try LaneLayout(checking: summary.sources, rows: UnsafeBufferPointer(start: ids, count: n))
        for lane in lanes.indices where layout.firstRows[lane + 1] - layout.firstRows[lane] != lanes[lane].count {
            throw BlockDecodingError(
                "the order column gives lane \(lane) \(layout.firstRows[lane + 1] - layout.firstRows[lane]) rows, it holds \(lanes[lane].count)"
            )
        }
        let gathered = BlockScratch(capacity: n)
        for (lane, block) in lanes.enumerated() {
            let first = layout.firstRows[lane]
            var wanted = BlockBuffers()
            if checkingLanes || buffers.starts != nil { wanted.starts = gathered.starts + first }
            if checkingLanes || buffers.ends != nil { wanted.ends = gathered.ends + first }
            if checkingLanes || buffers.values != nil { wanted.values = gathered.values + first }
            if checkingLanes || buffers.arrivals != nil { wanted.arrivals = gathered.arrivals + first }
            if checkingLanes { wanted.sourceIDs = gathered.sourceIDs + first }
            try block.decodeChecked(into: wanted)
            if checkingLanes, BlockSummary(gathered.rows(first..<(first + block.count))) != block.summary {
                throw BlockDecodingError("the summary of lane \(lane) does not match its rows")
            }
        }
        let gather = layout.gather
        func spread<T>(_ from: UnsafeMutablePointer<T>, _ to: UnsafeMutablePointer<T>?) {
            guard let to else { return }
            for row in 0..<n { to[row] = from[Int(gather[row])] }
        }
        spread(gathered.starts, buffers.starts)
        spread(gathered.ends, buffers.ends)
        spread(gathered.values, buffers.values)
        spread(gathered.arrivals, buffers.arrivals)
    }
}

/// Where each row of a laned block lies when the lanes' rows are laid one lane after the other.
private struct LaneLayout {
    /// Per lane, its first row in that layout, and the row count as the last entry.
    var firstRows: [Int]
    /// Per row of the block, its place in that layout.
    var gather: [Int32]

    /// The layout of rows from these sources (every row's source among `sources`, ascending).
    init(sources: [UInt16], rows: UnsafeBufferPointer<UInt16>) {
        do {
            try self.init(checking: sources, rows: rows)
        } catch {
            preconditionFailure("a row's source is missing from the block's sources")
        }
    }

    /// The layout, throwing when a row's source is not among `sources` (ascending, distinct).
    init(checking sources: [UInt16], rows: UnsafeBufferPointer<UInt16>) throws(BlockDecodingError) {
        var laneOfRow = [Int32](repeating: 0, count: rows.count)
        var counts = [Int](repeating: 0, count: sources.count)
        // Sources change every row or two where they interleave: the previous row's lane is tried first.
        var previous = (id: sources[0], lane: 0)
        for row in rows.indices {
            let id = rows[row]
            if id != previous.id {
                let lane = sources.partitionPoint { $0 < id }
                guard lane < sources.count, sources[lane] == id else {
                    throw BlockDecodingError("row \(row) has source \(id), which has no lane")
                }
                previous = (id, lane)
            }
            laneOfRow[row] = Int32(previous.lane)
            counts[previous.lane] += 1
        }
        firstRows = [0]
        for count in counts { firstRows.append(firstRows[firstRows.count - 1] + count) }
        var next = firstRows
        gather = laneOfRow
        for row in rows.indices {
            let lane = Int(laneOfRow[row])
            gather[row] = Int32(next[lane])
            next[lane] += 1
        }
    }
}
