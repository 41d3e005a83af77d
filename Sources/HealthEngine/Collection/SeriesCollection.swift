import HealthModel

extension Series {
    /// The buckets of a statistics collection over the selected rows (HEALTHKIT.md §5–§8), in time order, each
    /// with its boundaries as start and end. Options are already validated for the type.
    ///
    /// Sums are pro-rated to the buckets and merged across sources. Duration and most recent follow the bucket:
    /// the time the samples cover inside it (overlaps once, all sources) and the most recent sample overlapping
    /// it, with its interval (``BucketOverlaps``). Average (by the type's style), minimum and maximum come from
    /// the samples that *start* in the bucket, from all sources. So a bucket reached only by the tail of a
    /// sample that started earlier has a sum, a duration and a most recent, but no average. With `listEmpty`
    /// every bucket is listed (empty ones with no figures), otherwise only buckets with data; a bucket of zero
    /// length (a local day a zone skipped) is never listed.
    /// `separateBySource` adds, per bucket, each source identity's own un-merged figures in priority order.
    /// `envelope` is the type's ``CategoryValueSet/envelope`` (category types).
    ///
    /// Sums over many rows are computed in `parts` on the cores there are (``collectionInParts``); nil takes
    /// ``partCount(rows:)``, 1 computes them whole. Other figures are computed whole. `fromBlockStart` also reads
    /// the selected rows of the block holding the first row that can reach the buckets (a part's: they reach none
    /// of its buckets, but a block selected whole is read by its lanes, or without decoding when sparse).
    func collection(
        of selection: Selection, boundaries: BucketBoundaries, options: StatisticsOptions, style: AggregationStyle,
        unit: UnitTransform, listEmpty: Bool, envelope: Int? = nil, parts: Int? = nil, fromBlockStart: Bool = false
    ) -> [Statistics] {
        let parts = parts ?? Self.partCount(rows: selection.count)
        if parts > 1, boundaries.count > 1, options.subtracting(.separateBySource) == .cumulativeSum {
            return collectionInParts(
                parts, of: selection, boundaries: boundaries, options: options, style: style, unit: unit,
                listEmpty: listEmpty, envelope: envelope)
        }
        let bounds = boundaries.starts
        let span = boundaries.span
        // Rows that can reach the span: sums, durations and most recents need rows up to maxDuration before it,
        // the other figures do not.
        let reach =
            Self.followsOverlaps(options) ? span.lowerBound.subtractingSaturating(maxDuration) : span.lowerBound
        let reached = firstIndex(startAtLeast: reach)
        let first = fromBlockStart ? rows.firstRowOfBlock(holding: reached) : reached
        let selection = selection.clamped(to: first..<firstIndex(startAtLeast: span.upperBound))
        if options == .cumulativeSum, isSingleIdentity(selection) {
            // One source and sums only: the blocks are read one at a time, none decoded twice, nothing copied; a
            // regular block of mostly zero values (per-minute steps) is summed from its non-zero values alone.
            var sums = BucketSums(bounds: bounds)
            var sparse = SparseRegularRows()
            forEachChunk(
                of: selection, sourceIDs: false,
                whole: { block in
                    guard block.sparseRegularRows(into: &sparse) else { return false }
                    sums.addRun(sparse, 0..<sparse.count, maxDuration: maxDuration)
                    return true
                }
            ) { c, local, _ in
                for run in local.runs { sums.addRun(c, run, maxDuration: maxDuration) }
            }
            var merged = BucketGroup()
            merged.sums = sums
            var bySource: [(info: SourceInfo, group: BucketGroup)] = []
            return Self.buckets(boundaries, merged: &merged, bySource: &bySource, unit: unit, listEmpty: listEmpty)
        }
        if options == .cumulativeSum || options == [.cumulativeSum, .separateBySource] {
            // Several sources, sums only: merged group by group of blocks, each decoded once into a sliding buffer,
            // and each source's own sums from the same decoded groups: the selection is never decoded whole.
            var sums = BucketSums(bounds: bounds)
            var sumsBySource =
                options.contains(.separateBySource)
                ? SumsBySource(identities: sources.identities.count, bounds: bounds) : nil
            if chunkedMergedSums(selection, into: &sums, bySource: &sumsBySource) {
                var merged = BucketGroup()
                merged.sums = sums
                var bySource = sumsBySource?.groups(sources) ?? []
                return Self.buckets(
                    boundaries, merged: &merged, bySource: &bySource, unit: unit, listEmpty: listEmpty)
            }
        }
        return withColumns(of: selection) { c, selection in
            var merged = mergedBucketGroup(
                c, selection, bounds: bounds, options: options, style: style, unit: unit, envelope: envelope)
            var bySource: [(info: SourceInfo, group: BucketGroup)] = []
            if options.contains(.separateBySource) {
                bySource = bucketGroupsBySource(
                    c, selection, bounds: bounds, options: options, style: style, unit: unit, envelope: envelope)
            }
            return Self.buckets(boundaries, merged: &merged, bySource: &bySource, unit: unit, listEmpty: listEmpty)
        }
    }

    /// The buckets' statistics from the merged group and the per-source groups, in time order (empty ones only
    /// with `listEmpty`, zero-length ones never).
    private static func buckets(
        _ boundaries: BucketBoundaries, merged: inout BucketGroup,
        bySource: inout [(info: SourceInfo, group: BucketGroup)], unit: UnitTransform, listEmpty: Bool
    ) -> [Statistics] {
        let bounds = boundaries.starts
        var result: [Statistics] = []
        for bucket in 0..<boundaries.count where bounds[bucket] < bounds[bucket + 1] {
            let figures = merged.take(bucket, unit: unit)
            guard figures != nil || listEmpty else { continue }
            var perSource: [SourceStatistics] = []
            for index in bySource.indices {
                if let own = bySource[index].group.take(bucket, unit: unit) {
                    perSource.append(SourceStatistics(source: bySource[index].info, figures: own))
                }
            }
            result.append(
                Statistics(
                    start: bounds[bucket], end: bounds[bucket + 1], figures: figures ?? StatisticsFigures(),
                    bySource: perSource))
        }
        return result
    }

    /// Each source identity's own figures per bucket, in priority order, for the identities with selected rows.
    ///
    /// Sums come from one pass over the rows into a ``BucketSums`` per identity: the sources of a merged series
    /// interleave row by row, so splitting the selection first would make runs of one row each. The other
    /// figures reduce each identity's selection.
    private func bucketGroupsBySource(
        _ c: Columns, _ selection: Selection, bounds: [Timestamp], options: StatisticsOptions,
        style: AggregationStyle, unit: UnitTransform, envelope: Int?
    ) -> [(info: SourceInfo, group: BucketGroup)] {
        let identityCount = sources.identities.count
        var groups = [BucketGroup](repeating: BucketGroup(), count: identityCount)
        var present = [Bool](repeating: false, count: identityCount)
        if options.contains(.cumulativeSum) {
            var sums = SumsBySource(identities: identityCount, bounds: bounds)
            sums.add(c, selection, sources: sources)
            for identity in 0..<identityCount where sums.present[identity] {
                present[identity] = true
                groups[identity].sums = sums.sums[identity]
            }
        }
        let figureOptions = options.subtracting([.cumulativeSum, .separateBySource, .separateByValue])
        // Split only for the figures that need each identity's rows apart.
        let splits = options.contains(.separateByValue) || !figureOptions.isEmpty
        let perIdentity = splits ? selectionsByIdentity(c, selection) : []
        if options.contains(.separateByValue) {
            for identity in 0..<identityCount where !perIdentity[identity].isEmpty {
                present[identity] = true
                groups[identity].valueSums = bucketValueDurations(
                    c, perIdentity[identity], bounds: bounds, envelope: envelope)
            }
        }
        if !figureOptions.isEmpty {
            for identity in 0..<identityCount where !perIdentity[identity].isEmpty {
                present[identity] = true
                groups[identity].figures = bucketFigures(
                    c, perIdentity[identity], bounds: bounds, options: figureOptions, style: style, unit: unit)
            }
        }
        return sources.identitiesByPriority().filter { present[$0] }.map {
            (sources.identities[$0].latest, groups[$0])
        }
    }

    /// The per-bucket figures of the selected rows, sums merged across sources.
    private func mergedBucketGroup(
        _ c: Columns, _ selection: Selection, bounds: [Timestamp], options: StatisticsOptions,
        style: AggregationStyle, unit: UnitTransform, envelope: Int?
    ) -> BucketGroup {
        var group = BucketGroup()
        if options.contains(.cumulativeSum) {
            var sums = BucketSums(bounds: bounds)
            if hasSeveralIdentities(c, selection) {
                SourceMerge.merge(
                    c, selection, sourceRanks: sources.sourceRanks(), rankCount: sources.identities.count,
                    maxDuration: maxDuration, into: &sums)
            } else {
                for run in selection.runs { sums.addRun(c, run, maxDuration: maxDuration) }
            }
            group.sums = sums
        }
        if options.contains(.separateByValue) {
            group.valueSums = bucketValueDurations(c, selection, bounds: bounds, envelope: envelope)
        }
        let figureOptions = options.subtracting([.cumulativeSum, .separateBySource, .separateByValue])
        if !figureOptions.isEmpty {
            group.figures = bucketFigures(
                c, selection, bounds: bounds, options: figureOptions, style: style, unit: unit)
        }
        return group
    }

    /// Figures other than the sum for each bucket holding the start of a selected row, in bucket order.
    /// One pass: each bucket's rows are a slice of a run found by binary search, reduced in bulk.
    private func bucketFigures(
        _ c: Columns, _ selection: Selection, bounds: [Timestamp], options: StatisticsOptions,
        style: AggregationStyle, unit: UnitTransform
    ) -> [(bucket: Int, figures: StatisticsFigures)] {
        var result: [(bucket: Int, figures: StatisticsFigures)] = []
        let spanStart = bounds[0]
        let spanEnd = bounds[bounds.count - 1]
        var bucket = 0
        var reducer = FigureReducer(options: options, style: style, maxDuration: maxDuration)
        var reducerBucket = -1
        for run in selection.runs {
            var row = c.firstRow(in: run, startingAtLeast: spanStart)
            while row < run.upperBound, c.starts[row] < spanEnd {
                while bounds[bucket + 1] <= c.starts[row] { bucket += 1 }
                let next = c.firstRow(in: row..<run.upperBound, startingAtLeast: bounds[bucket + 1])
                if bucket != reducerBucket {
                    if reducerBucket >= 0 { result.append((reducerBucket, reducer.figures(unit: unit))) }
                    reducer = FigureReducer(options: options, style: style, maxDuration: maxDuration)
                    reducerBucket = bucket
                }
                reducer.add(c, row..<next)
                row = next
            }
        }
        if reducerBucket >= 0 { result.append((reducerBucket, reducer.figures(unit: unit))) }
        guard BucketOverlaps.isNeeded(for: options) else { return result }
        var overlaps = BucketOverlaps(bounds: bounds, options: options)
        for run in selection.runs {
            for row in run { overlaps.add(c, row: row) }
        }
        var merged: [(bucket: Int, figures: StatisticsFigures)] = []
        var next = 0
        for bucket in overlaps.touched.indices where overlaps.touched[bucket] {
            while next < result.count, result[next].bucket < bucket { next += 1 }
            var figures =
                next < result.count && result[next].bucket == bucket ? result[next].figures : StatisticsFigures()
            overlaps.fill(&figures, bucket: bucket, c, unit: unit)
            merged.append((bucket, figures))
        }
        return merged
    }

    /// Whether a figure the options ask for comes from every sample overlapping a bucket, not only those
    /// starting in it.
    static func followsOverlaps(_ options: StatisticsOptions) -> Bool {
        options.contains(.cumulativeSum) || options.contains(.separateByValue) || BucketOverlaps.isNeeded(for: options)
    }
}

/// The figures of one group of rows (all sources merged, or one source) per bucket, read back in bucket order.
struct BucketGroup {
    /// Pro-rated sums per bucket, when the sum was asked for.
    var sums: BucketSums?
    /// Per raw value, its covered microseconds per bucket, when separateByValue was asked for (category types).
    var valueSums: [BucketSums]?
    /// The other figures of the buckets holding a row's start, in bucket order.
    var figures: [(bucket: Int, figures: StatisticsFigures)] = []
    private var nextFigures = 0

    /// The group's figures in `bucket` (sum converted with `unit`), or nil when no row reached it.
    /// Call with increasing buckets.
    mutating func take(_ bucket: Int, unit: UnitTransform) -> StatisticsFigures? {
        var found: StatisticsFigures?
        if nextFigures < figures.count, figures[nextFigures].bucket == bucket {
            found = figures[nextFigures].figures
            nextFigures += 1
        }
        if let sums, sums.touched[bucket] {
            var withSum = found ?? StatisticsFigures()
            withSum.sum = unit.amount(sums.sums[bucket])
            found = withSum
        }
        if let valueSums, valueSums.contains(where: { $0.touched[bucket] }) {
            var withValues = found ?? StatisticsFigures()
            withValues.durationByValue = valueSums.indices.compactMap { value in
                let micros = Int64(valueSums[value].sums[bucket].rounded())
                return micros > 0 ? ValueDuration(value: value, duration: micros) : nil
            }
            found = withValues
        }
        return found
    }
}

extension Selection {
    /// The selected rows inside `rows`.
    func clamped(to rows: Range<Int>) -> Selection {
        var result = Selection()
        for run in runs {
            let clamped = run.clamped(to: rows)
            if !clamped.isEmpty { result.add(clamped) }
        }
        return result
    }
}

extension Series {
    /// The instants a collection without enumeration must cover for the selected rows (not empty): from the
    /// first start to the last instant a row covers (its end minus one microsecond, or a point's instant). For
    /// figures other than sums only starts matter, so then it ends at the last start.
    func collectionSpan(of selection: Selection, cumulative: Bool) -> ClosedRange<Timestamp> {
        let span = selection.span
        let edges = decodedRows([span.lowerBound, span.upperBound - 1]).starts
        let (first, lastStart) = (edges[0], edges[1])
        guard cumulative else { return first...lastStart }
        // Only rows starting within maxDuration of the last start can end after it: decode those alone.
        let reach = firstIndex(startAtLeast: lastStart.subtractingSaturating(maxDuration))
        let tail = selection.clamped(to: max(reach, span.lowerBound)..<span.upperBound)
        return withColumns(of: tail) { c, tail in
            var latest = LatestSample(maxDuration: maxDuration)
            for run in tail.runs.reversed() {
                latest.add(c, run)
                // Earlier runs start earlier; once one cannot end later than what was found, none can.
                if c.starts[run.upperBound - 1].addingReportingOverflow(maxDuration).partialValue < latest.end {
                    break
                }
            }
            return first...max(lastStart, latest.end - 1)
        }
    }
}

/// Each source identity's own pro-rated sums per bucket (``BucketSums``), un-merged, filled in row order from
/// columns holding their source ids: the sources of a merged series interleave row by row, so one pass over the
/// rows beats splitting the selection per identity (runs of one row each).
struct SumsBySource {
    private(set) var sums: [BucketSums]
    /// Whether the identity had a selected row.
    private(set) var present: [Bool]

    init(identities: Int, bounds: [Timestamp]) {
        sums = [BucketSums](repeating: BucketSums(bounds: bounds), count: identities)
        present = [Bool](repeating: false, count: identities)
    }

    mutating func add(_ c: Columns, _ selection: Selection, sources: SeriesSources) {
        let identityOfSource = sources.identityOfSource
        for row in selection.rows {
            let identity = identityOfSource[Int(c.sourceIDs[row])]
            present[identity] = true
            sums[identity].whole(from: c.starts[row], to: c.ends[row], value: c.values[row])
        }
    }

    /// Adds `range` of one identity's rows in start order (a lane of a sealed block, see
    /// ``Series/addLanedSums(context:fed:sourceRanks:into:bySource:)``).
    mutating func addRun(_ rows: some SummedRows, _ range: Range<Int>, identity: Int, maxDuration: Int64) {
        present[identity] = true
        sums[identity].addRun(rows, range, maxDuration: maxDuration)
    }

    /// The identities with rows, in priority order, each with its sums as a bucket group.
    func groups(_ sources: SeriesSources) -> [(info: SourceInfo, group: BucketGroup)] {
        sources.identitiesByPriority().filter { present[$0] }.map {
            var group = BucketGroup()
            group.sums = sums[$0]
            return (sources.identities[$0].latest, group)
        }
    }
}
