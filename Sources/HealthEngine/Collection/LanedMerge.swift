import HealthModel

extension Series {
    /// The merged sums (HEALTHKIT.md §8) of the rows of the sealed blocks `fed`, read source by source from the
    /// blocks' lanes instead of row by row in start order. A sample of rank r counts over the part of its
    /// interval that no sample with a duration of a higher-priority rank covers, and a point when no such
    /// sample covers its instant and no point of a higher rank lies there (``SourceMerge/layered(_:_:feeding:sourceRanks:maxDuration:into:)``
    /// states the same rule). So the highest-priority source present counts whole and is summed as a single
    /// source's rows are (a regular lane of mostly zero steps from its non-zero values alone); a lower source's
    /// lane lying under one stretch of the higher sources' cover (a phone counting the steps of a watch worn all
    /// along) is dropped unread; any other lane is decoded and each row counted whole, in its uncovered pieces,
    /// or not at all against that cover. `context` holds `fed` and every block whose rows may overlap them in
    /// time; all of their rows must be selected. With `bySource`, every lane's own sums are added too.
    ///
    /// Returns false, having added nothing, for blocks it cannot read so (a version 1 block of several sources,
    /// a priority rank held by two source ids): the caller merges their rows one by one. The sums equal that
    /// merge's up to the order of floating-point additions.
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
        // Per rank below the top, what the ranks above it cover and the instants of their points: only down to
        // the lowest rank the fed blocks hold (none when they hold the top source alone).
        let lowestFed = lanes.lazy.filter { fed.contains($0.block) }.map(\.rank).max() ?? top
        var above: [Int: LaneCover] = [:]
        var cover = LaneCover()
        // One scratch decodes every lane that must be, higher ones for their cover, fed ones for their rows.
        var scratch: BlockScratch?
        for (position, rank) in ranks.enumerated().dropLast() where rank < lowestFed {
            for entry in lanes where entry.rank == rank { cover.add(entry.lane, scratch: &scratch) }
            cover.finish()
            above[ranks[position + 1]] = cover
        }
        var sparse = SparseRegularRows()
        for entry in lanes where fed.contains(entry.block) {
            let lane = entry.lane
            let identity = sources.identityOfSource[Int(lane.summary.sources[0])]
            let cover = above[entry.rank]
            let under = cover.map { TimeSpan.lieUnderOne($0.spans, lane.summary) } ?? false
            guard entry.rank == top || !under || bySource != nil else { continue }
            if entry.rank == top || under, lane.sparseRegularRows(into: &sparse) {
                if entry.rank == top { sums.addRun(sparse, 0..<lane.count, maxDuration: maxDuration) }
                bySource?.addRun(sparse, 0..<lane.count, identity: identity, maxDuration: maxDuration)
                continue
            }
            let buffers = BlockScratch.reused(&scratch, for: lane.count)
            lane.decode(into: BlockBuffers(starts: buffers.starts, ends: buffers.ends, values: buffers.values))
            let decoded = buffers.rows(lane.count)
            let rows = FilteredColumns(
                columns: Columns(
                    starts: decoded.starts, ends: decoded.ends, values: decoded.values,
                    sourceIDs: UnsafeBufferPointer(start: buffers.sourceIDs, count: 0)),
                filter: EveryRow())
            bySource?.addRun(rows, 0..<lane.count, identity: identity, maxDuration: maxDuration)
            if entry.rank == top {
                sums.addRun(rows, 0..<lane.count, maxDuration: maxDuration)
            } else if let cover, !under {
                cover.addUncovered(decoded, into: &sums)
            }
        }
        return true
    }
}

/// What the lanes of higher-priority sources cover: the union of their rows' intervals, and the instants of
/// their points.
struct LaneCover {
    /// Sorted, disjoint, non-touching spans.
    private(set) var spans: [TimeSpan] = []
    /// Point instants, sorted once ``finish()`` ran.
    private var points: [Timestamp] = []
    /// Spans added since the last ``finish()``, in any order.
    private var added: [TimeSpan] = []

    /// Adds a lane's rows: from its header alone when they are regular and each lasts at least the step to the
    /// next (one span, no point), else decoded (into `scratch`, made or grown as needed).
    mutating func add(_ lane: SealedBlock, scratch: inout BlockScratch?) {
        if let (step, duration) = lane.regularShape(), step >= 0, duration > 0, duration >= step {
            added.append(TimeSpan(start: lane.summary.firstStart, end: lane.summary.latestEnd))
            return
        }
        let scratch = BlockScratch.reused(&scratch, for: lane.count)
        lane.decode(into: BlockBuffers(starts: scratch.starts, ends: scratch.ends))
        for row in 0..<lane.count {
            let (start, end) = (scratch.starts[row], scratch.ends[row])
            if start == end {
                points.append(start)
            } else if let last = added.last, start <= last.end, start >= last.start {
                added[added.count - 1].end = max(last.end, end)
            } else {
                added.append(TimeSpan(start: start, end: end))
            }
        }
    }

    /// Joins what was added into ``spans`` and sorts the points.
    mutating func finish() {
        spans = TimeSpan.union(spans, TimeSpan.union(of: added))
        added = []
        points.sort()
    }

    /// Adds rows of a lower-priority lane (in start order) to `sums` as §8 counts them under this cover: a row
    /// whole where nothing covers it, its uncovered pieces pro rata, nothing where it is covered; a point when
    /// nothing covers its instant and no higher point lies there.
    func addUncovered(_ rows: BlockColumns, into sums: inout BucketSums) {
        var first = 0
        for row in 0..<rows.count {
            let (start, end, value) = (rows.starts[row], rows.ends[row], rows.values[row])
            // The first span ending after the start (starts never go back within a lane).
            while first < spans.count, spans[first].end <= start { first += 1 }
            if start < end {
                if first == spans.count || spans[first].start >= end {
                    sums.whole(from: start, to: end, value: value)
                } else if spans[first].start > start || spans[first].end < end {
                    let rate = value / Double(end - start)
                    var uncovered = start
                    var index = first
                    while index < spans.count, spans[index].start < end {
                        if spans[index].start > uncovered {
                            sums.segment(from: uncovered, to: spans[index].start, rate: rate)
                        }
                        uncovered = max(uncovered, spans[index].end)
                        index += 1
                    }
                    if uncovered < end { sums.segment(from: uncovered, to: end, rate: rate) }
                }
            } else if first == spans.count || spans[first].start > start {
                let at = points.partitionPoint { $0 < start }
                if at == points.count || points[at] != start { sums.point(at: start, value: value) }
            }
        }
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
