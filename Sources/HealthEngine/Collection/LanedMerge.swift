import HealthModel

extension Series {
    /// The merged sums (HEALTHKIT.md §8) of the rows of the sealed blocks `fed`, read source by source from the
    /// blocks' lanes instead of row by row, when the merge comes down to this: the highest-priority source
    /// present counts whole, and every lower source's rows in `fed` lie under one stretch of the time that
    /// higher sources cover without a gap (a phone counting the steps of a watch worn all along). Those rows
    /// are dropped unread; the top source's are summed as a single source's are (a regular lane of mostly zero
    /// steps from its non-zero values alone). `context` holds `fed` and every block whose rows may overlap them
    /// in time; all of their rows must be selected. With `bySource`, every lane's own sums are added too.
    ///
    /// Returns false, having added nothing, when that is not the case (a lower source reaching past the cover,
    /// a version 1 block of several sources, a priority rank held by two source ids): the caller merges the
    /// rows one by one. The sums equal that merge's up to the order of floating-point additions.
    func addLanedSums(
        context: Range<Int>, fed: Range<Int>, sourceRanks: [Int], into sums: inout BucketSums,
        bySource: inout SumsBySource?
    ) -> Bool {
        var lanes: [(block: Int, lane: SealedBlock, rank: Int)] = []
        var sourceOfRank: [Int: UInt16] = [:]
        for index in context {
            let block = rows.blocks[index]
            guard block.summary.isSingleSource || !block.lanes.isEmpty else { return false }
            for lane in block.lanes.isEmpty ? [block] : block.lanes {
                let source = lane.summary.sources[0]
                let rank = sourceRanks[Int(source)]
                // One source id per rank, so each rank's lanes come in start order to its sums.
                let held = sourceOfRank.updateValue(source, forKey: rank)
                guard held == nil || held == source else { return false }
                lanes.append((index, lane, rank))
            }
        }
        let ranks = sourceOfRank.keys.sorted()
        guard let top = ranks.first else { return false }
        // Each rank's cover: the union of the time the ranks above it cover.
        var cover: [Int: [TimeSpan]] = [:]
        var above: [TimeSpan] = []
        for (position, rank) in ranks.enumerated().dropLast() {
            let spans = lanes.filter { $0.rank == rank }.flatMap(\.lane.coveredSpans)
            above = TimeSpan.union(above, TimeSpan.union(of: spans))
            cover[ranks[position + 1]] = above
        }
        for entry in lanes where entry.rank != top && fed.contains(entry.block) {
            guard TimeSpan.lieUnderOne(cover[entry.rank] ?? [], entry.lane.summary) else { return false }
        }
        var sparse = SparseRegularRows()
        var scratch: BlockScratch?
        for entry in lanes where fed.contains(entry.block) && (entry.rank == top || bySource != nil) {
            let lane = entry.lane
            let identity = sources.identityOfSource[Int(lane.summary.sources[0])]
            func add(_ rows: some SummedRows) {
                if entry.rank == top { sums.addRun(rows, 0..<lane.count, maxDuration: maxDuration) }
                bySource?.addRun(rows, 0..<lane.count, identity: identity, maxDuration: maxDuration)
            }
            if lane.sparseRegularRows(into: &sparse) {
                add(sparse)
            } else {
                let buffers =
                    scratch.flatMap { $0.capacity >= lane.count ? $0 : nil } ?? BlockScratch(capacity: lane.count)
                scratch = buffers
                lane.decode(into: BlockBuffers(starts: buffers.starts, ends: buffers.ends, values: buffers.values))
                let rows = buffers.rows(lane.count)
                let columns = Columns(
                    starts: rows.starts, ends: rows.ends, values: rows.values,
                    sourceIDs: UnsafeBufferPointer(start: buffers.sourceIDs, count: 0))
                add(FilteredColumns(columns: columns, filter: EveryRow()))
            }
        }
        return true
    }
}

extension SealedBlock {
    /// The time the block's rows with a duration cover, as sorted, disjoint, non-touching spans: from the
    /// header alone when the rows are regular and each lasts at least the step to the next.
    var coveredSpans: [TimeSpan] {
        if let (step, duration) = regularShape(), step >= 0, duration > 0, duration >= step {
            return [TimeSpan(start: summary.firstStart, end: summary.latestEnd)]
        }
        let scratch = BlockScratch(capacity: count)
        decode(into: BlockBuffers(starts: scratch.starts, ends: scratch.ends))
        var spans: [TimeSpan] = []
        for row in 0..<count where scratch.starts[row] < scratch.ends[row] {
            let (start, end) = (scratch.starts[row], scratch.ends[row])
            if let last = spans.last, start <= last.end {
                spans[spans.count - 1].end = max(last.end, end)
            } else {
                spans.append(TimeSpan(start: start, end: end))
            }
        }
        return spans
    }
}

extension TimeSpan {
    /// The union of spans in any order, as sorted, disjoint, non-touching spans.
    static func union(of spans: [TimeSpan]) -> [TimeSpan] {
        union([], spans.sorted { $0.start < $1.start })
    }

    /// Whether every row a block summary describes lies under one of `cover`'s spans (sorted, disjoint):
    /// each row with a duration inside it, and each point before its end, so §8 drops them all.
    static func lieUnderOne(_ cover: [TimeSpan], _ rows: BlockSummary) -> Bool {
        let index = cover.partitionPoint { $0.end <= rows.firstStart }
        guard index < cover.count else { return false }
        let span = cover[index]
        return span.start <= rows.firstStart && rows.latestEnd <= span.end && rows.lastStart < span.end
    }
}
