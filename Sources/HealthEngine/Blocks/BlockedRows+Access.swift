import HealthModel

/// Finding and decoding rows by row number: what the series' searches, filters and reducers read.
extension BlockedRows {
    /// First row whose start is `>= time` (``count`` when none): the blocks' summaries narrow the search to one
    /// block, whose starts alone are decoded.
    func firstIndex(startAtLeast time: Timestamp) -> Int {
        var low = 0
        var high = blocks.count
        while low < high {
            let middle = (low + high) / 2
            if blocks[middle].summary.lastStart < time { low = middle + 1 } else { high = middle }
        }
        if low < blocks.count {
            let block = blocks[low]
            if block.summary.firstStart >= time { return firstRows[low] }
            let starts = UnsafeMutablePointer<Timestamp>.allocate(capacity: block.count)
            defer { starts.deallocate() }
            block.decode(into: BlockBuffers(starts: starts))
            return firstRows[low] + Self.firstIndex(UnsafeBufferPointer(start: starts, count: block.count), time)
        }
        return sealedCount + head.starts.withUnsafeBufferPointer { Self.firstIndex($0, time) }
    }

    /// First index of `starts` (ascending) whose start is `>= time`.
    fileprivate static func firstIndex(_ starts: UnsafeBufferPointer<Timestamp>, _ time: Timestamp) -> Int {
        starts.partitionPoint { $0 < time }
    }

    /// The last row's start, if any.
    var lastStart: Timestamp? { head.starts.last ?? blocks.last?.summary.lastStart }

    /// Rows `range` (within ``count``) decoded into columns of their own: only the blocks they lie in are read.
    func rows(in range: Range<Int>) -> SeriesRows {
        var result = SeriesRows()
        guard !range.isEmpty else { return result }
        result.reserve(range.count)
        var index = range.lowerBound < sealedCount ? blockIndex(ofRow: range.lowerBound) : blocks.count
        var scratch: SeriesRows? = nil
        while index < blocks.count, firstRows[index] < range.upperBound {
            let block = blocks[index]
            let blockRange = firstRows[index]..<(firstRows[index] + block.count)
            if range.lowerBound <= blockRange.lowerBound, blockRange.upperBound <= range.upperBound {
                block.appendRows(to: &result)
            } else {
                var decoded = scratch ?? SeriesRows()
                decoded.removeAll()
                block.appendRows(to: &decoded)
                let wanted = max(range.lowerBound, blockRange.lowerBound)..<min(range.upperBound, blockRange.upperBound)
                result.append(
                    decoded,
                    rows: (wanted.lowerBound - blockRange.lowerBound)..<(wanted.upperBound - blockRange.lowerBound))
                scratch = decoded
            }
            index += 1
        }
        if range.upperBound > sealedCount {
            result.append(
                head, rows: (max(range.lowerBound, sealedCount) - sealedCount)..<(range.upperBound - sealedCount))
        }
        return result
    }

    /// The rows numbered `rows` (any order, repeats allowed), decoded, in the order given: each block holding
    /// one of them is decoded once.
    func rows(_ rows: [Int]) -> SeriesRows {
        var result = SeriesRows()
        guard !rows.isEmpty else { return result }
        let n = rows.count
        result.starts = ContiguousArray(repeating: 0, count: n)
        result.ends = ContiguousArray(repeating: 0, count: n)
        result.values = ContiguousArray(repeating: 0, count: n)
        result.sourceIDs = ContiguousArray(repeating: 0, count: n)
        result.arrivals = ContiguousArray(repeating: 0, count: n)
        var isSorted = true
        for i in 1..<max(n, 1) where rows[i] < rows[i - 1] {
            isSorted = false
            break
        }
        let order = isSorted ? Array(0..<n) : rows.indices.sorted { rows[$0] < rows[$1] }
        var decodedIndex = -1
        var decoded = SeriesRows()
        for position in order {
            let row = rows[position]
            let source: SeriesRows
            let local: Int
            if row >= sealedCount {
                source = head
                local = row - sealedCount
            } else {
                let index = blockIndex(ofRow: row)
                if index != decodedIndex {
                    decoded.removeAll()
                    blocks[index].appendRows(to: &decoded)
                    decodedIndex = index
                }
                source = decoded
                local = row - firstRows[index]
            }
            result.starts[position] = source.starts[local]
            result.ends[position] = source.ends[local]
            result.values[position] = source.values[local]
            result.sourceIDs[position] = source.sourceIDs[local]
            result.arrivals[position] = source.arrivals[local]
        }
        return result
    }

    /// Rows whose arrival anchor is greater than `anchor`, as (anchor, row) pairs in anchor order: all of them,
    /// or with `limit` > 0 the `limit` with the smallest anchors and whether more exist.
    ///
    /// Only blocks holding a newer anchor are read (their anchor column alone), in the order of their oldest
    /// anchors, and a limited call stops at the first block whose oldest anchor comes after the page it has: live
    /// data arrives in start order, so a page reads about one block whatever the lag, and paging through a long
    /// history costs each block once rather than the whole history per page.
    func rowsArrived(after anchor: UInt64, limit: Int = 0) -> (arrived: [(anchor: UInt64, row: Int)], more: Bool) {
        // Candidates: the blocks with a newer anchor, then the head (index blocks.count), by oldest anchor.
        var candidates: [(oldest: UInt64, index: Int)] = []
        for index in blocks.indices where arrivalSpans[index].upperBound > anchor {
            candidates.append((arrivalSpans[index].lowerBound, index))
        }
        if head.count > 0 {
            let span = head.arrivalSpan(0..<head.count)
            if span.upperBound > anchor { candidates.append((span.lowerBound, blocks.count)) }
        }
        candidates.sort { $0.oldest < $1.oldest }
        var found: [(anchor: UInt64, row: Int)] = []
        var scratch: UnsafeMutablePointer<UInt64>? = nil
        var scratchCapacity = 0
        defer { scratch?.deallocate() }
        // With a limit, `found` keeps the `limit + 1` smallest anchors seen (sorted whenever it is trimmed).
        var trimmed = true
        for candidate in candidates {
            if limit > 0, found.count > limit {
                if !trimmed {
                    found.sort { $0.anchor < $1.anchor }
                    found.removeSubrange((limit + 1)...)
                    trimmed = true
                }
                if candidate.oldest > found[limit].anchor { break }
            }
            if candidate.index == blocks.count {
                for local in 0..<head.count where head.arrivals[local] > anchor {
                    found.append((head.arrivals[local], sealedCount + local))
                }
            } else {
                let block = blocks[candidate.index]
                if scratchCapacity < block.count {
                    scratch?.deallocate()
                    scratch = .allocate(capacity: block.count)
                    scratchCapacity = block.count
                }
                block.decode(into: BlockBuffers(arrivals: scratch))
                let firstRow = firstRows[candidate.index]
                for local in 0..<block.count where scratch![local] > anchor {
                    found.append((scratch![local], firstRow + local))
                }
            }
            trimmed = false
        }
        found.sort { $0.anchor < $1.anchor }
        guard limit > 0, found.count > limit else { return (found, false) }
        found.removeSubrange(limit...)
        return (found, true)
    }
}

extension SeriesRows {
    /// Appends rows `range` of `other`.
    mutating func append(_ other: SeriesRows, rows range: Range<Int>) {
        starts.append(contentsOf: other.starts[range])
        ends.append(contentsOf: other.ends[range])
        values.append(contentsOf: other.values[range])
        sourceIDs.append(contentsOf: other.sourceIDs[range])
        arrivals.append(contentsOf: other.arrivals[range])
    }

    /// Drops every row, keeping the capacity.
    mutating func removeAll() {
        starts.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        sourceIDs.removeAll(keepingCapacity: true)
        arrivals.removeAll(keepingCapacity: true)
    }

    /// Runs `body` with read-only pointers to the columns (valid only inside `body`).
    func withColumns<Result>(_ body: (Columns) throws -> Result) rethrows -> Result {
        try starts.withUnsafeBufferPointer { s in
            try ends.withUnsafeBufferPointer { e in
                try values.withUnsafeBufferPointer { v in
                    try sourceIDs.withUnsafeBufferPointer { ids in
                        try body(Columns(starts: s, ends: e, values: v, sourceIDs: ids))
                    }
                }
            }
        }
    }
}

/// The block decoded last, kept by a caller that looks up many rows near each other (an insert checking each of
/// its rows against the stored ones), so neighbouring lookups decode a block once.
struct DecodedBlockCache {
    fileprivate var index = -1
    fileprivate var rows = SeriesRows()

    /// An empty cache.
    init() {}
}

extension BlockedRows {
    /// The number of the first row starting at `start` for which `match` (given the decoded rows holding it and
    /// its index there) is true, or nil; nothing is copied. `cache` keeps the last block decoded.
    func firstRow(
        startingAt start: Timestamp, cache: inout DecodedBlockCache, where match: (SeriesRows, Int) -> Bool
    ) -> Int? {
        var index = blocks.partitionPoint { $0.summary.lastStart < start }
        while index < blocks.count, blocks[index].summary.firstStart <= start {
            if cache.index != index {
                cache.rows.removeAll()
                blocks[index].appendRows(to: &cache.rows)
                cache.index = index
            }
            var row = cache.rows.starts.withUnsafeBufferPointer { Self.firstIndex($0, start) }
            while row < cache.rows.count, cache.rows.starts[row] == start {
                if match(cache.rows, row) { return firstRows[index] + row }
                row += 1
            }
            if row < cache.rows.count { return nil }
            index += 1
        }
        guard index == blocks.count else { return nil }
        var row = head.starts.withUnsafeBufferPointer { Self.firstIndex($0, start) }
        while row < head.count, head.starts[row] == start {
            if match(head, row) { return sealedCount + row }
            row += 1
        }
        return nil
    }
}
