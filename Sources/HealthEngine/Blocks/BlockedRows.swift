import HealthModel

/// The rows of one series as sealed blocks followed by a short mutable head, all in start order, equal starts
/// in the order they arrived (the order of ``Series``).
///
/// Blocks hold ``blockRows`` rows when sealed from the head (up to twice that after late rows, then split), in
/// start order across blocks: every block's last start is at or before the next block's first, and the head's
/// rows start at or after the last block's last start. Rows arriving in start order go to the head, which seals
/// a block whenever it holds ``blockRows`` rows. A late row (one starting before the last sealed start) is
/// merged into the one block it falls into, which is decoded and sealed again: exact, and it costs that block
/// (about 100 µs for 4,096 rows), not the series' tail. Removing rows reseals each block they were in; a block
/// left empty is dropped. (An overlay merged by background compaction would batch many late rows into one
/// reseal; resealing is the simplest exact approach and is what this type does.)
struct BlockedRows: Sendable {
    /// Rows per sealed block.
    let blockRows: Int
    /// The sealed blocks, in start order.
    private(set) var blocks: [SealedBlock] = []
    /// The smallest and largest arrival anchor of each block (parallel to ``blocks``): a changes query decodes
    /// only the blocks holding anchors newer than the one it asks for, and a page of one stops at the blocks
    /// whose anchors all come after the page's.
    private(set) var arrivalSpans: [ClosedRange<UInt64>] = []
    /// The row number of each block's first row (the rows of all blocks before it).
    private(set) var firstRows: [Int] = []
    /// Rows in sealed blocks.
    private(set) var sealedCount = 0
    /// The rows after the last block, sorted by start; fewer than ``blockRows``.
    private(set) var head = SeriesRows()

    /// Rows in all.
    var count: Int { sealedCount + head.count }

    /// Puts `block` in place of the block at `index` if that is still `current` (the same rows in other memory:
    /// see ``SealedBlock/moved(to:at:)``); returns whether it did.
    mutating func replaceBlock(at index: Int, _ current: SealedBlock, with block: SealedBlock) -> Bool {
        guard index < blocks.count, blocks[index].isSameBlock(as: current) else { return false }
        precondition(block.summary == current.summary, "a block replaced by other rows")
        blocks[index] = block
        return true
    }

    /// No rows, sealing blocks of `blockRows` rows (1 to ``SealedBlock/maxRows`` / 2).
    init(blockRows: Int = 4096) {
        precondition(blockRows >= 1 && blockRows <= SealedBlock.maxRows / 2, "block size out of range")
        self.blockRows = blockRows
    }

    /// Rows already sealed (a snapshot's blocks, in start order, each block's last start at or before the next
    /// one's first), `arrivalSpans` the smallest and largest anchor of each. A last block shorter than
    /// `blockRows` stays sealed (a series restored and never written again costs its blocks, not plain columns)
    /// until rows are merged in: it then becomes the head again (``thawLastBlock()``), so they extend it.
    init(sealed: [SealedBlock], arrivalSpans: [ClosedRange<UInt64>], blockRows: Int = 4096) {
        precondition(sealed.count == arrivalSpans.count, "one anchor span per block")
        self.init(blockRows: blockRows)
        blocks = sealed
        self.arrivalSpans = arrivalSpans
        renumber()
    }

    /// With an empty head, a last block shorter than ``blockRows`` becomes the head again: rows after it extend
    /// it rather than start a block of their own.
    private mutating func thawLastBlock() {
        guard head.count == 0, let last = blocks.last, last.count < blockRows else { return }
        head = last.rows()
        blocks.removeLast()
        arrivalSpans.removeLast()
        firstRows.removeLast()
        sealedCount -= head.count
    }

    /// Merges `rows` in: each lands after the stored rows starting at or before it (and after the earlier of
    /// `rows` with the same start), as ``Series/merge(_:)`` places them.
    mutating func merge(_ rows: SeriesRows) {
        guard rows.count > 0 else { return }
        thawLastBlock()
        let sorted = rows.isSortedByStart
        if sorted, lastStart.map({ $0 <= rows.starts[0] }) ?? true {
            // Live data: the rows follow every stored one, so they join the head as they are. The head grows by an
            // eighth at a time (not by doubling), so its slack stays small in series that never fill a block.
            let needed = head.count + rows.count
            if head.starts.capacity < needed {
                head.reserve(max(needed, min(blockRows, head.count + head.count / 8 + 64)))
            }
            head.append(contentsOf: rows)
            sealFullHead()
            return
        }
        let order = sorted ? Array(0..<rows.count) : rows.startOrder()
        var toHead = SeriesRows()
        var toBlock: [Int: SeriesRows] = [:]
        let lastSealedStart = blocks.last?.summary.lastStart
        for i in order {
            let start = rows.starts[i]
            if let lastSealedStart, start < lastSealedStart {
                toBlock[blockIndex(receiving: start), default: SeriesRows()].append(row: i, of: rows)
            } else {
                toHead.append(row: i, of: rows)
            }
        }
        for (index, late) in toBlock.sorted(by: { $0.key > $1.key }) {
            replaceBlock(index, with: SeriesRows.merging(blocks[index].rows(), late))
        }
        if toHead.count > 0 { head = SeriesRows.merging(head, toHead) }
        sealFullHead()
        renumber()
    }

    /// The block a late row starting at `start` lands in: the last whose first start is at or before it (the row
    /// goes after every stored row starting at or before it), or the first block.
    private func blockIndex(receiving start: Timestamp) -> Int {
        var low = 0
        var high = blocks.count
        while low < high {
            let middle = (low + high) / 2
            if blocks[middle].summary.firstStart <= start { low = middle + 1 } else { high = middle }
        }
        return max(low - 1, 0)
    }

    /// Moves whole blocks of ``blockRows`` rows from the front of the head into sealed blocks, numbering them as
    /// they come (renumbering every block at each seal made a series' ingest quadratic in its blocks).
    private mutating func sealFullHead() {
        guard head.count >= blockRows else { return }
        let sealedRows = head.count / blockRows * blockRows
        var first = 0
        while first < sealedRows {
            blocks.append(SealedBlock(encoding: head, range: first..<(first + blockRows)))
            arrivalSpans.append(head.arrivalSpan(first..<(first + blockRows)))
            firstRows.append(sealedCount)
            sealedCount += blockRows
            first += blockRows
        }
        // A copy, not removeFirst: the head's buffers would keep the capacity of every row it ever held.
        head = head.copy(sealedRows..<head.count)
    }

    /// Replaces block `index` by `rows` sealed again: one block when they are at most twice ``blockRows``,
    /// else pieces of ``blockRows`` rows (the last longer); none when `rows` is empty.
    private mutating func replaceBlock(_ index: Int, with rows: SeriesRows) {
        var sealed: [SealedBlock] = []
        var spans: [ClosedRange<UInt64>] = []
        var first = 0
        while first < rows.count {
            let last = rows.count - first <= 2 * blockRows ? rows.count : first + blockRows
            sealed.append(SealedBlock(encoding: rows, range: first..<last))
            spans.append(rows.arrivalSpan(first..<last))
            first = last
        }
        blocks.replaceSubrange(index...index, with: sealed)
        arrivalSpans.replaceSubrange(index...index, with: spans)
    }

    /// Recomputes ``firstRows`` and ``sealedCount`` after blocks changed anywhere but at the end.
    private mutating func renumber() {
        firstRows.removeAll(keepingCapacity: true)
        var total = 0
        for index in blocks.indices {
            firstRows.append(total)
            total += blocks[index].count
        }
        sealedCount = total
    }

    /// The first row of the sealed block holding `row`, or `row` itself when it lies in the head.
    func firstRowOfBlock(holding row: Int) -> Int {
        row < sealedCount ? firstRows[blockIndex(ofRow: row)] : row
    }

    /// The block holding row `row` (< ``sealedCount``).
    func blockIndex(ofRow row: Int) -> Int {
        var low = 0
        var high = firstRows.count
        while low < high {
            let middle = (low + high) / 2
            if firstRows[middle] <= row { low = middle + 1 } else { high = middle }
        }
        return low - 1
    }

    /// Removes the rows numbered `rows` (ascending, distinct, each below ``count``): each block they were in is
    /// sealed again without them, or dropped when empty.
    mutating func removeRows(_ rows: [Int]) {
        guard !rows.isEmpty else { return }
        var headRows: [Int] = []
        var byBlock: [Int: [Int]] = [:]
        for row in rows {
            if row >= sealedCount {
                headRows.append(row - sealedCount)
            } else {
                let index = blockIndex(ofRow: row)
                byBlock[index, default: []].append(row - firstRows[index])
            }
        }
        for (index, local) in byBlock.sorted(by: { $0.key > $1.key }) {
            var decoded = blocks[index].rows()
            decoded.remove(rows: local)
            replaceBlock(index, with: decoded)
        }
        head.remove(rows: headRows)
        renumber()
    }

    /// Every row, decoded (tests, and snapshots until they store blocks).
    func allRows() -> SeriesRows {
        var rows = SeriesRows()
        rows.reserve(count)
        for block in blocks { block.appendRows(to: &rows) }
        rows.append(contentsOf: head)
        return rows
    }

    /// Heap bytes held: the blocks and the head's columns.
    var approximateBytes: Int {
        var memory = StoreMemory()
        addMemory(to: &memory)
        return memory.sealedBlocks + memory.blockIndex + memory.head
    }

    /// Adds the sealed blocks, their bookkeeping and the head to `memory`.
    func addMemory(to memory: inout StoreMemory) {
        memory.sealedBlocks += blocks.reduce(0) { $0 + $1.approximateBytes }
        memory.blockIndex +=
            blocks.capacity * MemoryLayout<SealedBlock>.stride + firstRows.capacity * 8 + arrivalSpans.capacity * 16
        memory.head += head.approximateBytes
    }
}

extension SeriesRows {
    /// The smallest and largest arrival anchor of rows `range` (not empty).
    func arrivalSpan(_ range: Range<Int>) -> ClosedRange<UInt64> {
        var oldest = arrivals[range.lowerBound]
        var newest = oldest
        for anchor in arrivals[range] {
            oldest = min(oldest, anchor)
            newest = max(newest, anchor)
        }
        return oldest...newest
    }

    /// Appends row `row` of `other`.
    mutating func append(row: Int, of other: SeriesRows) {
        starts.append(other.starts[row])
        ends.append(other.ends[row])
        values.append(other.values[row])
        sourceIDs.append(other.sourceIDs[row])
        arrivals.append(other.arrivals[row])
    }

    /// Appends every row of `other`.
    mutating func append(contentsOf other: SeriesRows) {
        starts.append(contentsOf: other.starts)
        ends.append(contentsOf: other.ends)
        values.append(contentsOf: other.values)
        sourceIDs.append(contentsOf: other.sourceIDs)
        arrivals.append(contentsOf: other.arrivals)
    }

    /// Room for `count` rows in every column.
    mutating func reserve(_ count: Int) {
        starts.reserveCapacity(count)
        ends.reserveCapacity(count)
        values.reserveCapacity(count)
        sourceIDs.reserveCapacity(count)
        arrivals.reserveCapacity(count)
    }

    /// Rows `range`, in columns of their own sized to fit.
    func copy(_ range: Range<Int>) -> SeriesRows {
        SeriesRows(
            starts: ContiguousArray(starts[range]), ends: ContiguousArray(ends[range]),
            values: ContiguousArray(values[range]), sourceIDs: ContiguousArray(sourceIDs[range]),
            arrivals: ContiguousArray(arrivals[range]))
    }

    /// Drops the rows numbered `rows` (ascending, distinct).
    mutating func remove(rows: [Int]) {
        guard !rows.isEmpty else { return }
        var kept = SeriesRows()
        kept.reserve(count - rows.count)
        var next = 0
        for row in 0..<count {
            if next < rows.count, rows[next] == row {
                next += 1
            } else {
                kept.append(row: row, of: self)
            }
        }
        self = kept
    }

    /// `a` and `b` (each sorted by start) merged by start, `a`'s rows first among equal starts.
    static func merging(_ a: SeriesRows, _ b: SeriesRows) -> SeriesRows {
        var result = SeriesRows()
        result.reserve(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a.starts[i] <= b.starts[j]) {
                result.append(row: i, of: a)
                i += 1
            } else {
                result.append(row: j, of: b)
                j += 1
            }
        }
        return result
    }

    /// Heap bytes of the columns (capacity).
    var approximateBytes: Int {
        starts.capacity * 8 + ends.capacity * 8 + values.capacity * 8 + sourceIDs.capacity * 2 + arrivals.capacity * 8
    }
}
