import HealthModel

/// Reduces rows to the figures a set of statistics options asks for (HEALTHKIT.md §5), un-merged.
///
/// Feed it runs in start order with ``add(_:_:)``; each requested figure runs its own tight loop over the run.
/// The most recent row is always tracked (it costs a few rows per run) since its end is the latest end.
/// ``figures(unit:)`` gives the sum as a plain sum of values: merging sources (§8) is ``SourceMerge``'s job.
struct FigureReducer {
    let options: StatisticsOptions
    let style: AggregationStyle
    private(set) var count = 0
    /// Start of the first row fed: the earliest, as rows come in start order.
    private(set) var earliestStart = Timestamp.max
    private var sum = ValueSum()
    private var extremes = ValueExtremes()
    private var latest: LatestSample
    private var covered = CoveredTime()
    private var timeWeighted = TimeWeightedMean()
    private var energy = EnergyAverage()

    /// A reducer for `options` over rows of a series of `style` whose longest sample lasts `maxDuration`.
    init(options: StatisticsOptions, style: AggregationStyle, maxDuration: Int64) {
        self.options = options
        self.style = style
        latest = LatestSample(maxDuration: maxDuration)
    }

    private var wantsValueSum: Bool {
        options.contains(.cumulativeSum) || (options.contains(.discreteAverage) && style == .discreteArithmetic)
    }

    /// Feeds rows `rows` of `c`; `offset` numbers them in the series (chunks of a series each have their own
    /// columns: ``Series/forEachChunk(of:_:)``).
    mutating func add(_ c: Columns, _ rows: Range<Int>, offset: Int = 0) {
        guard let first = rows.first else { return }
        count += rows.count
        earliestStart = min(earliestStart, c.starts[first])
        latest.add(c, rows, offset: offset)
        if wantsValueSum { sum.add(c, rows) }
        if options.contains(.discreteMin) || options.contains(.discreteMax) { extremes.add(c, rows) }
        if options.contains(.duration) { covered.add(c, rows) }
        if options.contains(.discreteAverage) {
            switch style {
            case .discreteTemporallyWeighted: timeWeighted.add(c, rows)
            case .discreteEquivalentContinuousLevel: energy.add(c, rows)
            case .cumulative, .discreteArithmetic, .category: break
            }
        }
    }

    /// Whether whole blocks may be fed by their summaries (``add(_:)``): every figure asked for is a count, sum,
    /// extreme, arithmetic or time-weighted mean (the latter by ``BlockSummary/timeWeighted``); the most recent
    /// sample, the covered time and the energy average need rows.
    var takesSummaries: Bool {
        !options.contains(.mostRecent) && !options.contains(.duration)
            && (!options.contains(.discreteAverage) || style == .discreteArithmetic
                || style == .discreteTemporallyWeighted)
    }

    /// Whether `summary` can stand for its block's rows (``takesSummaries``, and a time-weighted mean needs the
    /// block's partial, which summaries read from a header alone lack).
    func takes(_ summary: BlockSummary) -> Bool {
        takesSummaries && (!wantsTimeWeighted || summary.timeWeighted != nil)
    }

    private var wantsTimeWeighted: Bool {
        options.contains(.discreteAverage) && style == .discreteTemporallyWeighted
    }

    /// Feeds a whole block by its summary (only when ``takesSummaries``): the figures are those of its rows
    /// fed as one run.
    mutating func add(_ summary: BlockSummary) {
        precondition(takes(summary), "these figures need the rows")
        count += summary.count
        earliestStart = min(earliestStart, summary.firstStart)
        latest.add(summary)
        if wantsValueSum { sum.add(summary) }
        if options.contains(.discreteMin) || options.contains(.discreteMax) { extremes.add(summary) }
        if wantsTimeWeighted, let partial = summary.timeWeighted { timeWeighted.add(partial) }
    }

    /// End of the most recent row: the latest end of the rows fed.
    var latestEnd: Timestamp { latest.end }

    /// The requested figures in `unit`; `nil` for figures not requested. Call only after rows were fed.
    func figures(unit: UnitTransform) -> StatisticsFigures {
        var figures = StatisticsFigures()
        if options.contains(.cumulativeSum) { figures.sum = unit.amount(sum.total) }
        if options.contains(.discreteAverage) {
            let average: Double? =
                switch style {
                case .discreteArithmetic: count > 0 ? sum.total / Double(count) : nil
                case .discreteTemporallyWeighted: timeWeighted.mean
                case .discreteEquivalentContinuousLevel: energy.level
                case .cumulative, .category: nil
                }
            figures.average = average.map(unit.level)
        }
        if options.contains(.discreteMin), count > 0 { figures.minimum = unit.level(extremes.minimum) }
        if options.contains(.discreteMax), count > 0 { figures.maximum = unit.level(extremes.maximum) }
        if options.contains(.mostRecent), latest.row >= 0 {
            figures.mostRecent = MostRecent(
                value: unit.level(latest.value), start: latest.start, end: latest.end)
        }
        if options.contains(.duration) { figures.duration = covered.microseconds }
        return figures
    }
}
