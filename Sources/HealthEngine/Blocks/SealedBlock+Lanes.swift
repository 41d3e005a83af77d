import HealthModel

/// Laned blocks (version 2): the rows of several sources, each source's rows a version 1 block of its own, and
/// an order column (each row's lane, packed: a bit a row for two sources, less where one source runs long) that
/// puts them back in start order. Byte layout: Protocol/STORAGE.md, "Sealed blocks".
extension SealedBlock {
    /// Encodes rows of several sources (`summary` is theirs) as a laned block.
    init(laning rows: BlockColumns, summary: BlockSummary) {
        let n = rows.count
        let sources = summary.sources
        // Each row's lane, and each lane's rows, one lane after the other, in row order within a lane.
        let order = filledColumn(count: n) { UInt64(LaneLookup.lane(of: rows.sourceIDs[$0], in: sources)!) }
        var firstRows = [Int](repeating: 0, count: sources.count + 1)
        for lane in order { firstRows[Int(lane) + 1] += 1 }
        for lane in sources.indices { firstRows[lane + 1] += firstRows[lane] }
        let gathered = BlockScratch(capacity: n)
        var next = firstRows
        for row in 0..<n {
            let lane = Int(order[row])
            let to = next[lane]
            next[lane] += 1
            gathered.starts[to] = rows.starts[row]
            gathered.ends[to] = rows.ends[row]
            gathered.values[to] = rows.values[row]
            gathered.sourceIDs[to] = rows.sourceIDs[row]
            gathered.arrivals[to] = rows.arrivals[row]
        }
        var writer = BlockWriter(capacity: 128 + n * 2)
        Self.writeHeader(Self.lanedVersion, summary, into: &writer)
        var offsets: [Int32] = []
        Self.appendColumn(to: &writer, offsets: &offsets) { writer in
            order.withUnsafeBufferPointer { PackedIntegers.encode($0, into: &writer) }
        }
        var lanes: [(BlockSummary, [Int32])] = []
        for lane in sources.indices {
            let block = SealedBlock(encoding: gathered.rows(firstRows[lane]..<firstRows[lane + 1]))
            writer.varint(UInt64(block.byteCount))
            let shift = Int32(writer.bytes.count)
            writer.append(block.bytes)
            lanes.append((block.summary, block.columnOffsets.map { $0 + shift }))
        }
        self.init(owning: writer.bytes, summary: summary, columnOffsets: offsets, lanes: lanes)
    }

    /// ``decodeChecked(into:checkingLanes:)`` of a laned block: each lane's columns that `buffers` asks for (ends
    /// need starts), decoded one lane after the other, then put in row order by the order column. Throws when the
    /// order column names a source without a lane or gives a lane more rows than it holds.
    func decodeLanes(into buffers: BlockBuffers, checkingLanes: Bool) throws(BlockDecodingError) {
        let n = count
        // Where each lane's rows begin when the lanes lie one after the other.
        var firstRows = [0]
        for lane in lanes { firstRows.append(firstRows[firstRows.count - 1] + lane.count) }
        let gather = UnsafeMutablePointer<Int32>.allocate(capacity: n)
        defer { gather.deallocate() }
        try withBytes { (raw) throws(BlockDecodingError) in
            var reader = column(0, raw)
            try Self.placeRows(
                order: &reader, sources: summary.sources, firstRows: firstRows, count: n, ids: buffers.sourceIDs,
                into: gather)
        }
        let gathered = BlockScratch(capacity: n)
        for (lane, block) in lanes.enumerated() {
            let first = firstRows[lane]
            var wanted = BlockBuffers()
            if checkingLanes || buffers.starts != nil || buffers.ends != nil { wanted.starts = gathered.starts + first }
            if checkingLanes || buffers.ends != nil { wanted.ends = gathered.ends + first }
            if checkingLanes || buffers.values != nil { wanted.values = gathered.values + first }
            if checkingLanes || buffers.arrivals != nil { wanted.arrivals = gathered.arrivals + first }
            if checkingLanes { wanted.sourceIDs = gathered.sourceIDs + first }
            try block.decodeChecked(into: wanted)
            if checkingLanes, BlockSummary(gathered.rows(first..<(first + block.count))) != block.summary {
                throw BlockDecodingError("the summary of lane \(lane) does not match its rows")
            }
        }
        func spread<T>(_ from: UnsafeMutablePointer<T>, _ to: UnsafeMutablePointer<T>?) {
            guard let to else { return }
            for row in 0..<n { to[row] = from[Int(gather[row])] }
        }
        spread(gathered.starts, buffers.starts)
        spread(gathered.ends, buffers.ends)
        spread(gathered.values, buffers.values)
        spread(gathered.arrivals, buffers.arrivals)
    }

    /// Reads the order column (each row's lane, packed) and writes each row's place among the lanes' rows laid
    /// one lane after the other (lane k's rows from `firstRows[k]`), and its source id to `ids` when given. Throws
    /// when a row names a lane the block lacks or gives a lane more rows than it holds, or bytes are left.
    private static func placeRows(
        order reader: inout BlockReader, sources: [UInt16], firstRows: [Int], count n: Int,
        ids: UnsafeMutablePointer<UInt16>?, into gather: UnsafeMutablePointer<Int32>
    ) throws(BlockDecodingError) {
        let lanes = UnsafeMutablePointer<UInt64>.allocate(capacity: n)
        defer { lanes.deallocate() }
        try PackedIntegers.decode(&reader, count: n, into: lanes)
        guard reader.remaining == 0 else { throw BlockDecodingError("bytes left in the order column") }
        var next = firstRows
        try next.withUnsafeMutableBufferPointer { (next) throws(BlockDecodingError) in
            for row in 0..<n {
                let lane = lanes[row]
                guard lane < UInt64(sources.count) else {
                    throw BlockDecodingError("row \(row) is in lane \(lane) of \(sources.count)")
                }
                let place = next[Int(lane)]
                guard place < firstRows[Int(lane) + 1] else {
                    throw BlockDecodingError("the order column gives lane \(lane) more rows than it holds")
                }
                gather[row] = Int32(truncatingIfNeeded: place)
                next[Int(lane)] = place + 1
            }
        }
        if let ids {
            for row in 0..<n { ids[row] = sources[Int(lanes[row])] }
        }
    }
}

/// The lane of a source id in a laned block: its place among the block's sources (ascending).
private enum LaneLookup {
    @inline(__always)
    static func lane(of id: UInt16, in sources: [UInt16]) -> Int? {
        // Few sources (the usual two or three): compared in turn; more: a binary search.
        if sources.count <= 8 { return sources.firstIndex(of: id) }
        let lane = sources.partitionPoint { $0 < id }
        return lane < sources.count && sources[lane] == id ? lane : nil
    }
}
