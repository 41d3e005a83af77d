import HealthModel

extension Series {
    /// The statistics of the selected rows (not empty) for `options`, already validated for the type.
    ///
    /// The sum is merged across sources (HEALTHKIT.md §8); averages, minimum and maximum use every source's
    /// samples; with `separateBySource` each source identity also gets its own un-merged figures, listed in
    /// priority order. With `separateByValue` (category types) the time per value, merged by priority
    /// (``CategoryCoverage``), and per source that source's own.
    /// `envelope` is the type's ``CategoryValueSet/envelope`` (category types).
    func statistics(
        of selection: Selection, options: StatisticsOptions, style: AggregationStyle, unit: UnitTransform,
        envelope: Int? = nil
    ) -> Statistics {
        if options == .mostRecent {
            // The most recent sample alone (all sources): only the last chunks are read, and the first row's start.
            let latest = latestSample(of: selection)
            var figures = StatisticsFigures()
            figures.mostRecent = MostRecent(value: unit.level(latest.value), start: latest.start, end: latest.end)
            let first = decodedRows([selection.span.lowerBound]).starts[0]
            return Statistics(start: first, end: latest.end, figures: figures, bySource: [])
        }
        if !options.contains(.separateBySource), !options.contains(.separateByValue), isSingleIdentity(selection) {
            // One source identity: the merged sum is the plain sum, and every figure is read chunk by chunk.
            var all = FigureReducer(options: options, style: style, maxDuration: maxDuration)
            var plain = ValueSum()
            let sums = options.contains(.cumulativeSum)
            // Blocks lying wholly in the selection count by their summaries when the figures allow it.
            let summaries = all.takesSummaries
            forEachChunk(
                of: selection,
                whole: { block in
                    guard summaries, all.takes(block.summary) else { return false }
                    all.add(block.summary)
                    if sums { plain.add(block.summary) }
                    return true
                }
            ) { c, local, firstRow in
                for run in local.runs {
                    all.add(c, run, offset: firstRow)
                    if sums { plain.add(c, run) }
                }
            }
            var figures = all.figures(unit: unit)
            if sums { figures.sum = unit.amount(plain.total) }
            return Statistics(start: all.earliestStart, end: all.latestEnd, figures: figures, bySource: [])
        }
        return withColumns(of: selection) { c, selection in
            let figureOptions = options.subtracting(.separateBySource)
            var all = FigureReducer(options: figureOptions, style: style, maxDuration: maxDuration)
            for run in selection.runs { all.add(c, run) }
            var figures = all.figures(unit: unit)
            if options.contains(.cumulativeSum) {
                figures.sum = unit.amount(mergedSum(c, selection, window: nil))
            }
            if options.contains(.separateByValue) {
                figures.durationByValue = valueDurations(c, selection, envelope: envelope)
            }
            var bySource: [SourceStatistics] = []
            if options.contains(.separateBySource) {
                let perIdentity = selectionsByIdentity(c, selection)
                for identity in sources.identitiesByPriority() where !perIdentity[identity].isEmpty {
                    var reducer = FigureReducer(options: figureOptions, style: style, maxDuration: maxDuration)
                    for run in perIdentity[identity].runs { reducer.add(c, run) }
                    var own = reducer.figures(unit: unit)
                    if options.contains(.separateByValue) {
                        own.durationByValue = valueDurations(c, perIdentity[identity], envelope: envelope)
                    }
                    bySource.append(SourceStatistics(source: sources.identities[identity].latest, figures: own))
                }
            }
            return Statistics(start: all.earliestStart, end: all.latestEnd, figures: figures, bySource: bySource)
        }
    }

    /// The merged sum of the selected rows in the canonical unit, pro-rated to `window` when one is given.
    /// When only one source identity is selected this is the plain (or pro-rated) sum.
    func mergedSum(_ c: Columns, _ selection: Selection, window: Range<Timestamp>?) -> Double {
        if !hasSeveralIdentities(c, selection) {
            if let window {
                var prorated = ProratedSum(window: window)
                for run in selection.runs { prorated.add(c, run) }
                return prorated.total
            }
            var plain = ValueSum()
            for run in selection.runs { plain.add(c, run) }
            return plain.total
        }
        return SourceMerge.sum(
            c, selection, sourceRanks: sources.sourceRanks(), rankCount: sources.identities.count, window: window,
            maxDuration: maxDuration)
    }

    func hasSeveralIdentities(_ c: Columns, _ selection: Selection) -> Bool {
        guard sources.identities.count > 1, let first = selection.runs.first?.lowerBound else { return false }
        let identityOfSource = sources.identityOfSource
        let firstIdentity = identityOfSource[Int(c.sourceIDs[first])]
        for row in selection.rows where identityOfSource[Int(c.sourceIDs[row])] != firstIdentity { return true }
        return false
    }

    /// The selection split by source identity (indexed like `sources.identities`).
    func selectionsByIdentity(_ c: Columns, _ selection: Selection) -> [Selection] {
        var result = [Selection](repeating: Selection(), count: sources.identities.count)
        if result.count == 1 {
            result[0] = selection
            return result
        }
        let identityOfSource = sources.identityOfSource
        for row in selection.rows { result[identityOfSource[Int(c.sourceIDs[row])]].add(row) }
        return result
    }
}
