import HealthModel

/// The fast path of the merged sum (HEALTHKIT.md §8) when few source identities are selected: by priority layers.
///
/// The elementary-segment rule of ``SourceMerge`` comes down to this: a sample of rank r counts over the part of
/// its interval that no sample with a duration of a higher-priority rank covers; a point of rank r at t counts
/// when no such sample covers t and no point of a higher-priority rank lies at t. Each selected rank is a
/// *layer* (0 = highest priority). A first pass over the rows (``MergeLayers``) builds each layer's union of
/// intervals and from them each layer's *coverage*, the union of the layers above it. Between two consecutive
/// coverage boundaries every layer is either covered throughout or not at all, so the second pass hands the rows
/// of such a stretch to the sink in bulk with a layer filter (the sink sums them as it sums a single source);
/// only rows crossing a boundary, and points at an instant where several layers have points, are looked at one
/// by one: counted whole, dropped, or handed as their uncovered pieces.
///
/// The results equal the sweep's up to the order of floating-point additions (a whole sample adds its value, a
/// piece `value / duration × length`, where the sweep adds per segment the winner's summed rates × length); the
/// tests hold them to 1e-12 relative.
extension SourceMerge {
    /// Most layers (ranks present in the selection) the fast path takes: beyond, building the coverages (layers ×
    /// intervals) stops paying off and the heap sweep is used.
    static let layerLimit = 8

    /// Feeds `sink` like ``sweep(_:_:sourceRanks:rankCount:into:)``, but in the start order of the samples (so a
    /// sink may see an instant earlier than the last one it saw) and with rows counted whole where nothing above
    /// them covers them. `maxDuration`, when known, bounds the selected rows' durations. Returns false, having called nothing on `sink`, when the selection is empty or holds
    /// more than ``layerLimit`` ranks.
    /// With `feeding`, only those rows (a part of `selection`) are handed to `sink`, the others of `selection`
    /// serving as the context that covers them: a chunk of a longer selection, given every selected row that
    /// overlaps one of the fed rows in time (``Series/chunkedMergedSums(_:into:bySource:)``), contributes what the whole
    /// merge gives for its rows.
    static func layered<Sink: MergeSink>(
        _ c: Columns, _ selection: Selection, feeding: Selection? = nil, sourceRanks: [Int], maxDuration: Int64?,
        into sink: inout Sink
    ) -> Bool {
        guard let layers = MergeLayers(c, selection, sourceRanks: sourceRanks, maxDuration: maxDuration) else {
            return false
        }
        layers.layerOfSource.withUnsafeBufferPointer { layerOfSource in
            var pass = LayeredPass(layers: layers, layerOfSource: layerOfSource)
            for run in (feeding ?? selection).runs { pass.feed(c, run, into: &sink) }
        }
        return true
    }
}

/// The second pass of the layered merge: rows in start order, in bulk per stretch where it can.
private struct LayeredPass {
    let layers: MergeLayers
    let layerOfSource: UnsafeBufferPointer<UInt8>
    /// Per layer, the first interval of its coverage ending after the current start.
    private var cursor: [Int]
    /// The first cut after the current start.
    private var cut = 0
    /// The first contested point instant at or after the current start.
    private var contested = 0

    init(layers: MergeLayers, layerOfSource: UnsafeBufferPointer<UInt8>) {
        self.layers = layers
        self.layerOfSource = layerOfSource
        cursor = layers.coverage.map(\.lowerBound)
    }

    mutating func feed<Sink: MergeSink>(_ c: Columns, _ run: Range<Int>, into sink: inout Sink) {
        var row = run.lowerBound
        while row < run.upperBound {
            let start = c.starts[row]
            while cut < layers.cuts.count, layers.cuts[cut] <= start { cut += 1 }
            while contested < layers.contested.count, layers.contested[contested].instant < start { contested += 1 }
            // Rows starting before the limit end inside the stretch and hold no contested point.
            var bulkLimit = cut < layers.cuts.count ? layers.cuts[cut].subtractingSaturating(layers.maxDuration) : .max
            if contested < layers.contested.count { bulkLimit = min(bulkLimit, layers.contested[contested].instant) }
            if start < bulkLimit {
                let bulkEnd = c.firstRow(in: row..<run.upperBound, near: row, startingAtLeast: bulkLimit)
                let counting = countingLayers(at: start)
                if counting == allLayers {  // nothing covered here: a plain sum, no source lookups
                    sink.wholeRows(c, row..<bulkEnd, counting: EveryRow(), maxDuration: layers.maxDuration)
                } else {
                    let filter = LayerFilter(layerOfSource: layerOfSource, counting: counting)
                    sink.wholeRows(c, row..<bulkEnd, counting: filter, maxDuration: layers.maxDuration)
                }
                row = bulkEnd
            } else {
                feedOne(c, row, into: &sink)
                row += 1
            }
        }
    }

    /// Moves `layer`'s cursor to its first coverage interval ending after `instant`; returns it.
    private mutating func coverage(of layer: Int, after instant: Timestamp) -> Int {
        var first = cursor[layer]
        let limit = layers.coverage[layer].upperBound
        while first < limit, layers.covered[first].end <= instant { first += 1 }
        cursor[layer] = first
        return first
    }

    /// Every layer's bit.
    private var allLayers: UInt32 { (1 << UInt32(layers.coverage.count)) - 1 }

    /// Bit `l` set when nothing above layer `l` covers `instant` (nor, so, the stretch holding it).
    private mutating func countingLayers(at instant: Timestamp) -> UInt32 {
        var counting: UInt32 = 1
        for layer in 1..<layers.coverage.count {
            let first = coverage(of: layer, after: instant)
            if first == layers.coverage[layer].upperBound || layers.covered[first].start > instant {
                counting |= 1 << UInt32(layer)
            }
        }
        return counting
    }

    /// One row on its own: whole, dropped, or its uncovered pieces; a point by the rule for points.
    private mutating func feedOne<Sink: MergeSink>(_ c: Columns, _ row: Int, into sink: inout Sink) {
        let layer = Int(layerOfSource[Int(c.sourceIDs[row])])
        let start = c.starts[row]
        let end = c.ends[row]
        let value = c.values[row]
        guard layer > 0 else {
            sink.whole(from: start, to: end, value: value)
            return
        }
        let first = coverage(of: layer, after: start)
        let limit = layers.coverage[layer].upperBound
        let covered = layers.covered
        if start < end {
            if first == limit || covered[first].start >= end {
                sink.whole(from: start, to: end, value: value)
            } else if covered[first].start > start || covered[first].end < end {
                let rate = value / Double(end - start)
                var uncovered = start
                var index = first
                while index < limit, covered[index].start < end {
                    if covered[index].start > uncovered {
                        sink.segment(from: uncovered, to: covered[index].start, rate: rate)
                    }
                    uncovered = max(uncovered, covered[index].end)
                    index += 1
                }
                if uncovered < end { sink.segment(from: uncovered, to: end, rate: rate) }
            }
        } else if first == limit || covered[first].start > start {
            let isContested =
                contested < layers.contested.count && layers.contested[contested].instant == start
            if !isContested || layers.contested[contested].best == layer { sink.point(at: start, value: value) }
        }
    }
}

/// A half-open stretch of time `[start, end)`.
struct TimeSpan: Equatable {
    var start: Timestamp
    var end: Timestamp
}

/// What the first pass of the layered merge learns: the layers, their coverages, where coverages change, and
/// the instants where points of several layers meet.
struct MergeLayers {
    /// Layer of each source id (0 = highest priority); `UInt8.max` for sources not selected.
    let layerOfSource: [UInt8]
    /// Every layer's coverage, one after the other: sorted, disjoint, non-touching intervals.
    let covered: [TimeSpan]
    /// Per layer, its coverage in ``covered`` (layer 0's is empty).
    let coverage: [Range<Int>]
    /// Every boundary of every coverage, ascending and distinct.
    let cuts: [Timestamp]
    /// Instants where one-by-one treatment decides which points count, ascending, with the best layer of the
    /// points there: where points of two or more layers lie, or, when the lowest layer was skipped, every instant
    /// holding a point of another layer.
    let contested: [(instant: Timestamp, best: Int)]
    /// Longest duration among the selected rows, or a bound on it.
    let maxDuration: Int64

    /// Nil when the selection is empty or holds more than ``SourceMerge/layerLimit`` ranks. Given a bound on the
    /// rows' durations, the first pass skips the intervals of the lowest rank of all (`sourceRanks.max()`): no
    /// layer lies below it, so nobody needs its coverage, and its rows cost a source lookup.
    init?(_ c: Columns, _ selection: Selection, sourceRanks: [Int], maxDuration knownMaxDuration: Int64?) {
        var layerOfSource = [UInt8](repeating: .max, count: sourceRanks.count)
        var rankOfLayer: [Int] = []
        let skippedRank = knownMaxDuration == nil ? -1 : (sourceRanks.max() ?? -1)
        var skippedLayer = Int(UInt8.max) - 1
        // Per layer (in order of appearance), its union so far and the interval still open: [openStart, openEnd).
        var unions = [[TimeSpan]](repeating: [], count: SourceMerge.layerLimit)
        var openStart = [Timestamp](repeating: .min, count: SourceMerge.layerLimit)
        var openEnd = [Timestamp](repeating: .min, count: SourceMerge.layerLimit)
        var maxDuration: Int64 = 0
        var pointInstants: [(instant: Timestamp, layers: UInt32)] = []
        let measuresDuration = knownMaxDuration == nil
        var skippedLayerFound = skippedLayer
        var measuredMaxDuration = maxDuration
        var lastPointInstant = Timestamp.min
        var lastPointLayers: UInt32 = 0
        // The loop runs once per selected row: plain pointers, no bounds or uniqueness checks per row.
        let complete = layerOfSource.withUnsafeMutableBufferPointer { layerOf -> Bool in
            openStart.withUnsafeMutableBufferPointer { openStart in
                openEnd.withUnsafeMutableBufferPointer { openEnd in
                    // Locals, not the captured variables (which live in boxes): the loop keeps them in registers.
                    var skippedLayer = skippedLayer
                    var maxDuration = maxDuration
                    var pointInstant = lastPointInstant
                    var pointLayers = lastPointLayers
                    defer {
                        (skippedLayerFound, measuredMaxDuration) = (skippedLayer, maxDuration)
                        (lastPointInstant, lastPointLayers) = (pointInstant, pointLayers)
                    }
                    for run in selection.runs {
                        for row in run {
                            let id = Int(c.sourceIDs[row])
                            var layer = Int(layerOf[id])
                            if layer == Int(UInt8.max) {
                                if let existing = rankOfLayer.firstIndex(of: sourceRanks[id]) {
                                    layer = existing
                                } else {
                                    guard rankOfLayer.count < SourceMerge.layerLimit else { return false }
                                    layer = rankOfLayer.count
                                    rankOfLayer.append(sourceRanks[id])
                                    if sourceRanks[id] == skippedRank { skippedLayer = layer }
                                }
                                layerOf[id] = UInt8(layer)
                            }
                            if layer == skippedLayer { continue }
                            let start = c.starts[row]
                            let end = c.ends[row]
                            if start < end {
                                if measuresDuration { maxDuration = max(maxDuration, end - start) }
                                let open = openEnd[layer]
                                if start <= open {
                                    if end > open { openEnd[layer] = end }
                                } else {
                                    if openStart[layer] < open {
                                        unions[layer].append(TimeSpan(start: openStart[layer], end: open))
                                    }
                                    openStart[layer] = start
                                    openEnd[layer] = end
                                }
                            } else {
                                if start != pointInstant {
                                    if pointLayers != 0 { pointInstants.append((pointInstant, pointLayers)) }
                                    pointInstant = start
                                    pointLayers = 0
                                }
                                pointLayers |= 1 << UInt32(layer)
                            }
                        }
                    }
                    return true
                }
            }
        }
        guard complete else { return nil }
        skippedLayer = skippedLayerFound
        maxDuration = measuredMaxDuration
        if lastPointLayers != 0 { pointInstants.append((lastPointInstant, lastPointLayers)) }
        guard !rankOfLayer.isEmpty else { return nil }

        // Relabel the layers by priority.
        let byPriority = rankOfLayer.indices.sorted { rankOfLayer[$0] < rankOfLayer[$1] }
        var label = [Int](repeating: 0, count: byPriority.count)
        for (newLayer, oldLayer) in byPriority.enumerated() { label[oldLayer] = newLayer }
        self.layerOfSource = layerOfSource.map { $0 == .max ? $0 : UInt8(label[Int($0)]) }
        let lowestSkipped = skippedLayer < rankOfLayer.count
        contested = pointInstants.filter { lowestSkipped || $0.layers.nonzeroBitCount > 1 }.map { instant, layers in
            (instant, (0..<byPriority.count).filter { layers >> UInt32($0) & 1 != 0 }.map { label[$0] }.min()!)
        }
        self.maxDuration = knownMaxDuration ?? maxDuration

        var covered: [TimeSpan] = []
        var coverage: [Range<Int>] = [0..<0]
        var cuts: [Timestamp] = []
        var above: [TimeSpan] = []
        for oldLayer in byPriority.dropLast() {
            if openStart[oldLayer] < openEnd[oldLayer] {
                unions[oldLayer].append(TimeSpan(start: openStart[oldLayer], end: openEnd[oldLayer]))
            }
            above = TimeSpan.union(above, unions[oldLayer])
            coverage.append(covered.count..<(covered.count + above.count))
            covered += above
            cuts = mergeSortedDistinct(cuts, above.flatMap { [$0.start, $0.end] })
        }
        self.covered = covered
        self.coverage = coverage
        self.cuts = cuts
    }
}

extension TimeSpan {
    /// The union of two sorted lists of disjoint intervals, touching intervals joined.
    static func union(_ a: [TimeSpan], _ b: [TimeSpan]) -> [TimeSpan] {
        var result: [TimeSpan] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            let next: TimeSpan
            if j == b.count || (i < a.count && a[i].start <= b[j].start) {
                next = a[i]
                i += 1
            } else {
                next = b[j]
                j += 1
            }
            if let last = result.last, next.start <= last.end {
                if next.end > last.end { result[result.count - 1].end = next.end }
            } else {
                result.append(next)
            }
        }
        return result
    }
}

/// The ascending, distinct values of two ascending lists.
func mergeSortedDistinct(_ a: [Timestamp], _ b: [Timestamp]) -> [Timestamp] {
    var result: [Timestamp] = []
    result.reserveCapacity(a.count + b.count)
    var i = 0
    var j = 0
    while i < a.count || j < b.count {
        let next: Timestamp
        if j == b.count || (i < a.count && a[i] <= b[j]) {
            next = a[i]
            i += 1
        } else {
            next = b[j]
            j += 1
        }
        if result.last != next { result.append(next) }
    }
    return result
}

extension Columns {
    /// ``firstRow(in:startingAtLeast:)`` for an answer expected near `row` (the rows before it start earlier):
    /// gallops forward from `row`, then searches the last step, so a short answer costs a few comparisons.
    func firstRow(in rows: Range<Int>, near row: Int, startingAtLeast time: Timestamp) -> Int {
        var low = row
        var step = 1
        while low + step < rows.upperBound, starts[low + step] < time {
            low += step
            step *= 2
        }
        return firstRow(in: low..<min(low + step, rows.upperBound), startingAtLeast: time)
    }
}
