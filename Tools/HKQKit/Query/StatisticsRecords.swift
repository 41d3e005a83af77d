import HealthModel

/// The figure columns of statistics output, shared by `stats`, `collection` and `watch --collection` so that a
/// figure has one key everywhere: `sum`, `average`, `minimum`, `maximum`, `mostRecent`, `mostRecentStart`,
/// `mostRecentEnd`, `duration` (seconds in JSON and CSV, `1h 02m` in tables), and with `separateByValue` one
/// duration per value of a category type, keyed by the value's name (`inBed`, `asleepCore`, …).
struct FigureColumn {
    var column: RecordSet.Column
    var cell: (StatisticsFigures) -> JSONValue
    /// The figure as a number a chart's bar measures (a duration in seconds); nil for figures that are
    /// instants (`mostRecentStart`, `mostRecentEnd`), which no chart draws.
    var amount: ((StatisticsFigures) -> Double?)?

    /// The columns of the figures `options` asks for, in a fixed order, with times and durations as `format`
    /// prints them; `values` is the category type's enumeration (its values get a duration column each).
    static func columns(
        for options: StatisticsOptions, times: TimestampFormatter, format: OutputFormat,
        values: CategoryValueSet? = nil
    ) -> [FigureColumn] {
        var figures: [FigureColumn] = []
        func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
        func figure(
            _ key: String, _ title: String, amount: ((StatisticsFigures) -> Double?)? = nil,
            _ cell: @escaping (StatisticsFigures) -> JSONValue
        ) {
            figures.append(
                FigureColumn(column: .init(key, title: title, roundedInTable: true), cell: cell, amount: amount))
        }
        func numeric(_ key: String, _ title: String, _ value: @escaping (StatisticsFigures) -> Double?) {
            figure(key, title, amount: value) { number(value($0)) }
        }
        if options.contains(.cumulativeSum) { numeric("sum", "SUM") { $0.sum } }
        if options.contains(.discreteAverage) { numeric("average", "AVERAGE") { $0.average } }
        if options.contains(.discreteMin) { numeric("minimum", "MIN") { $0.minimum } }
        if options.contains(.discreteMax) { numeric("maximum", "MAX") { $0.maximum } }
        if options.contains(.mostRecent) {
            numeric("mostRecent", "MOST RECENT") { $0.mostRecent?.value }
            figure("mostRecentStart", "MOST RECENT START") {
                $0.mostRecent.map { times.cell($0.start, format: format) } ?? .null
            }
            figure("mostRecentEnd", "MOST RECENT END") {
                $0.mostRecent.map { times.cell($0.end, format: format) } ?? .null
            }
        }
        func duration(_ micros: Int64?) -> JSONValue {
            guard let micros else { return .null }
            return format == .table || format == .chart
                ? .string(HumanFormat.duration(micros: micros)) : .number(Double(micros) / 1e6)
        }
        func seconds(_ micros: Int64?) -> Double? { micros.map { Double($0) / 1e6 } }
        if options.contains(.duration) {
            figure("duration", "DURATION", amount: { seconds($0.duration) }) { duration($0.duration) }
        }
        if options.contains(.separateByValue), let values {
            for value in values.values {
                func ofValue(_ figures: StatisticsFigures) -> Int64? {
                    figures.durationByValue == nil ? nil : figures.duration(ofValue: value.rawValue)
                }
                figure(value.name, Self.title(value.name), amount: { seconds(ofValue($0)) }) {
                    duration(ofValue($0))
                }
            }
        }
        return figures
    }

    /// `ASLEEP CORE` for `asleepCore`: a camel-case name as a table title.
    static func title(_ name: String) -> String {
        var title = ""
        for character in name {
            if character.isUppercase, let last = title.last, last.isLowercase { title.append(" ") }
            title.append(character)
        }
        return title.uppercased()
    }

    /// The first plain number among the figures (sum, average, minimum, maximum, most recent): what a chart or
    /// a one-figure line shows.
    static func headline(_ figures: StatisticsFigures) -> Double? {
        [figures.sum, figures.average, figures.minimum, figures.maximum].compactMap { $0 }.first
            ?? figures.mostRecent?.value
    }
}

/// Lays out a statistics answer for printing: the figures asked for, times in the query's zone, durations as
/// `2h 05m` in tables and as seconds in JSON and CSV.
struct StatisticsRecords {
    let type: QuantityType
    let unit: String
    let statistics: Statistics
    let options: StatisticsOptions
    let times: TimestampFormatter
    let format: OutputFormat

    /// The columns of the figures requested, in a fixed order.
    var figures: [FigureColumn] {
        FigureColumn.columns(for: options, times: times, format: format, values: type.categoryValues)
    }

    /// The merged answer as one record: type, unit, start, end, then the figures.
    var merged: RecordSet {
        let figures = self.figures
        return RecordSet(
            columns: [
                .init("type", title: "TYPE"), .init("unit", title: "UNIT"), .init("start", title: "START"),
                .init("end", title: "END"),
            ] + figures.map(\.column),
            rows: [
                [
                    .string(type.identifier), .string(type.isCategory ? "" : unit),
                    times.cell(statistics.start, format: format),
                    times.cell(statistics.end, format: format),
                ] + figures.map { $0.cell(statistics.figures) }
            ])
    }

    /// One record per source (with `separateBySource`): source, then the figures.
    var bySource: RecordSet {
        let figures = self.figures
        return RecordSet(
            columns: [.init("source", title: "SOURCE")] + figures.map(\.column),
            rows: statistics.bySource.map { entry in
                [.string(entry.source.name)] + figures.map { $0.cell(entry.figures) }
            })
    }

    /// Everything as the chosen format: a field block then a source table; one JSON object with a `sources`
    /// array (with by-source); CSV with columns type, unit, start, end, then `source` (with by-source: empty on
    /// the merged first row, the source's name on each following row), then the figures.
    func rendered() -> String {
        let merged = self.merged
        let perSource = options.contains(.separateBySource)
        switch format {
        case .table, .chart:
            return merged.renderedFields() + (perSource ? "\n" + bySource.renderedTable() : "")
        case .json:
            guard case .object(var pairs) = merged.jsonObject(row: 0) else { return merged.renderedJSON() }
            if perSource {
                let sources = bySource
                pairs.append(("sources", .array(sources.rows.indices.map { sources.jsonObject(row: $0) })))
            }
            return JSONValue.object(pairs).rendered + "\n"
        case .csv:
            guard perSource else { return merged.renderedCSV() }
            let head = Array(merged.columns.prefix(4))
            let first = Array(merged.rows[0].prefix(4))
            var rows = RecordSet(columns: head + [.init("source")] + merged.columns.dropFirst(4))
            rows.append(first + [.null] + merged.rows[0].dropFirst(4))
            for row in bySource.rows { rows.append(first + row) }
            return rows.renderedCSV()
        }
    }
}
