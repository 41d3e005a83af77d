import HealthModel

extension Series {
    /// Blocks' worth of rows a chunked merge feeds at a time (whole chunks, so a group may hold more): enough that
    /// the context decoded around each group (about a block on each side) stays a small share. 32,768 rows at
    /// 4,096-row blocks; the tests' tiny blocks make tiny groups, so their merges cross many group edges.
    static let mergeGroupBlocks = 8

    /// The merged sums (HEALTHKIT.md §8) of the selected rows into `sums`, chunk by chunk instead of decoding the
    /// whole selection into columns of its own: the chunks (sealed blocks, then the head) are taken in groups of
    /// about ``mergeGroupBlocks`` blocks' rows, and each group is merged by ``SourceMerge/layered(_:_:feeding:sourceRanks:maxDuration:into:)``
    /// with, as context, every selected row that may overlap one of its rows in time (rows starting up to
    /// ``maxDuration`` before its first start, and up to its latest end after it), which the blocks' summaries
    /// find. One decoded buffer slides along the series, so each block is decoded once. Each group's rows get
    /// what the merge of the whole selection gives them (up to the order of floating-point additions).
    ///
    /// Returns false, having added nothing, when the selection's blocks hold more than
    /// ``SourceMerge/layerLimit`` ranks (the heap sweep's case, which the caller runs on decoded columns).
    ///
    /// With `bySource`, each source's own sums are added from the same decoded groups (no second decoding).
    func chunkedMergedSums(
        _ selection: Selection, into sums: inout BucketSums, bySource: inout SumsBySource?
    ) -> Bool {
        let span = selection.span
        guard !span.isEmpty else { return true }
        let sourceRanks = sources.sourceRanks()
        let ranks = Set(rows.sourceIDs(in: span).map { sourceRanks[Int($0)] })
        guard ranks.count <= SourceMerge.layerLimit else { return false }
        let chunks = MergeChunks(rows: rows, span: span)
        var window = MergeWindow()
        var cursor = SelectionCursor(selection)
        var fedFirst = chunks.first
        while fedFirst < chunks.end {
            // The fed group: whole chunks from fedFirst, up to the group size.
            var fedEnd = fedFirst + 1
            var fedRows = chunks.rows(fedFirst).count
            while fedEnd < chunks.end, fedRows < Self.mergeGroupBlocks * rows.blockRows {
                fedRows += chunks.rows(fedEnd).count
                fedEnd += 1
            }
            // Context: chunks before it whose last start reaches its first start minus maxDuration, and chunks
            // after it starting by its latest end.
            let reachBack = chunks.firstStart(fedFirst).subtractingSaturating(maxDuration)
            var contextFirst = fedFirst
            while contextFirst > chunks.first, chunks.lastStart(contextFirst - 1) >= reachBack { contextFirst -= 1 }
            var latestEnd = Timestamp.min
            for chunk in fedFirst..<fedEnd { latestEnd = max(latestEnd, chunks.latestEnd(chunk)) }
            var contextEnd = fedEnd
            while contextEnd < chunks.end, chunks.firstStart(contextEnd) <= latestEnd { contextEnd += 1 }
            let contextRows = chunks.rows(contextFirst).lowerBound..<chunks.rows(contextEnd - 1).upperBound
            let fedRange = chunks.rows(fedFirst).lowerBound..<chunks.rows(fedEnd - 1).upperBound
            // Context starts never move back, so the runs before this one's are done with.
            cursor.drop(before: contextRows.lowerBound)
            // Sealed blocks selected whole: read source by source, from their lanes.
            if contextEnd <= rows.blocks.count, cursor.selectsAll(of: contextRows),
                addLanedSums(
                    context: contextFirst..<contextEnd, fed: fedFirst..<fedEnd, sourceRanks: sourceRanks,
                    into: &sums, bySource: &bySource)
            {
                fedFirst = fedEnd
                continue
            }
            window.hold(contextFirst..<contextEnd, of: chunks)
            let context = cursor.selected(in: contextRows).shifted(by: -window.firstRow)
            let fed = cursor.selected(in: fedRange).shifted(by: -window.firstRow)
            if !fed.isEmpty {
                let merged = window.withColumns { c in
                    bySource?.add(c, fed, sources: sources)
                    return SourceMerge.layered(
                        c, context, feeding: fed, sourceRanks: sourceRanks, maxDuration: maxDuration, into: &sums)
                }
                precondition(merged, "a group holds at most the ranks of the whole selection")
            }
            fedFirst = fedEnd
        }
        return true
    }
}

/// The chunks of a series' rows a span reaches: sealed blocks by index, then the head as index `blocks.count`.
private struct MergeChunks {
    let rows: BlockedRows
    /// The first and one past the last chunk holding a row of the span.
    let first: Int
    let end: Int
    /// The head's latest end (the head has no summary).
    private let headLatestEnd: Timestamp

    init(rows: BlockedRows, span: Range<Int>) {
        self.rows = rows
        first = span.lowerBound < rows.sealedCount ? rows.blockIndex(ofRow: span.lowerBound) : rows.blocks.count
        end =
            span.upperBound > rows.sealedCount
            ? rows.blocks.count + 1 : rows.blockIndex(ofRow: span.upperBound - 1) + 1
        headLatestEnd = rows.head.ends.max() ?? .min
    }

    /// Row numbers of chunk `index`.
    func rows(_ index: Int) -> Range<Int> {
        index < rows.blocks.count
            ? rows.firstRows[index]..<(rows.firstRows[index] + rows.blocks[index].count)
            : rows.sealedCount..<rows.count
    }

    func firstStart(_ index: Int) -> Timestamp {
        index < rows.blocks.count ? rows.blocks[index].summary.firstStart : rows.head.starts.first ?? .max
    }

    func lastStart(_ index: Int) -> Timestamp {
        index < rows.blocks.count ? rows.blocks[index].summary.lastStart : rows.head.starts.last ?? .min
    }

    func latestEnd(_ index: Int) -> Timestamp {
        index < rows.blocks.count ? rows.blocks[index].summary.latestEnd : headLatestEnd
    }
}

/// Consecutive chunks decoded into one set of reused columns (starts, ends, values, source ids; no anchors),
/// sliding forward: chunks it holds already are kept (moved to the front), new ones decoded after them.
private struct MergeWindow {
    private var starts = ContiguousArray<Timestamp>()
    private var ends = ContiguousArray<Timestamp>()
    private var values = ContiguousArray<Double>()
    private var sourceIDs = ContiguousArray<UInt16>()
    /// The chunks held, and the series row number of the first row held.
    private var chunks = 0..<0
    private(set) var firstRow = 0

    /// Holds the chunks `wanted` from its first (whose lower bound never moves back), and maybe a few after.
    mutating func hold(_ wanted: Range<Int>, of all: MergeChunks) {
        precondition(wanted.lowerBound >= chunks.lowerBound, "the window slides forward")
        if wanted.lowerBound >= chunks.upperBound {
            removeAll()
            firstRow = all.rows(wanted.lowerBound).lowerBound
            chunks = wanted.lowerBound..<wanted.lowerBound
        } else {
            let drop = all.rows(wanted.lowerBound).lowerBound - firstRow
            if drop > 0 {
                starts.removeFirst(drop)
                ends.removeFirst(drop)
                values.removeFirst(drop)
                sourceIDs.removeFirst(drop)
                firstRow += drop
            }
            chunks = wanted.lowerBound..<chunks.upperBound
        }
        while chunks.upperBound < wanted.upperBound {
            append(chunks.upperBound, of: all)
            chunks = chunks.lowerBound..<(chunks.upperBound + 1)
        }
    }

    private mutating func removeAll() {
        starts.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        sourceIDs.removeAll(keepingCapacity: true)
    }

    /// Decodes chunk `index` onto the end.
    private mutating func append(_ index: Int, of all: MergeChunks) {
        let rows = all.rows
        guard index < rows.blocks.count else {
            starts.append(contentsOf: rows.head.starts)
            ends.append(contentsOf: rows.head.ends)
            values.append(contentsOf: rows.head.values)
            sourceIDs.append(contentsOf: rows.head.sourceIDs)
            return
        }
        rows.blocks[index].append(starts: &starts, ends: &ends, values: &values, sourceIDs: &sourceIDs)
    }

    /// Runs `body` on the rows held (row 0 is series row ``firstRow``).
    func withColumns<Result>(_ body: (Columns) -> Result) -> Result {
        starts.withUnsafeBufferPointer { s in
            ends.withUnsafeBufferPointer { e in
                values.withUnsafeBufferPointer { v in
                    sourceIDs.withUnsafeBufferPointer { ids in
                        body(Columns(starts: s, ends: e, values: v, sourceIDs: ids))
                    }
                }
            }
        }
    }
}

/// Walks a selection's runs forward, giving the selected rows inside ranges that move forward.
private struct SelectionCursor {
    private let runs: [Range<Int>]
    /// The first run that may still reach the ranges asked for.
    private var next = 0

    init(_ selection: Selection) { runs = selection.runs }

    /// The selected rows in `range` (whose lower bound is at or after the last ``drop(before:)``).
    func selected(in range: Range<Int>) -> Selection {
        var result = Selection()
        var index = next
        while index < runs.count, runs[index].lowerBound < range.upperBound {
            let clamped = runs[index].clamped(to: range)
            if !clamped.isEmpty { result.add(clamped) }
            index += 1
        }
        return result
    }

    /// Whether every row of `range` is selected (one run holds them all).
    func selectsAll(of range: Range<Int>) -> Bool {
        var index = next
        while index < runs.count, runs[index].lowerBound <= range.lowerBound {
            if runs[index].upperBound >= range.upperBound { return true }
            index += 1
        }
        return false
    }

    /// Forgets the runs that end at or before `row`.
    mutating func drop(before row: Int) {
        while next < runs.count, runs[next].upperBound <= row { next += 1 }
    }
}
