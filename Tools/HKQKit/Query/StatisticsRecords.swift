import HealthModel

/// Lays out a statistics answer for printing: the figures asked for, times in the query's zone, durations as
/// `2h 05m` in tables and as seconds in JSON and CSV.
struct StatisticsRecords {
    /// One figure column: key, table title, and how to read it from the figures.
    struct Figure {
        var column: RecordSet.Column
        var cell: (StatisticsFigures) -> JSONValue
    }

    let type: QuantityType
    let unit: String
    let statistics: Statistics
    let options: StatisticsOptions
    let times: TimestampFormatter
    let format: OutputFormat

    /// The columns of the figures requested, in a fixed order.
    var figures: [Figure] {
        var figures: [Figure] = []
        func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
        if options.contains(.cumulativeSum) {
            figures.append(Figure(column: .init("sum", title: "SUM")) { number($0.sum) })
        }
        if options.contains(.discreteAverage) {
            figures.append(Figure(column: .init("average", title: "AVERAGE")) { number($0.average) })
        }
        if options.contains(.discreteMin) {
            figures.append(Figure(column: .init("minimum", title: "MIN")) { number($0.minimum) })
        }
        if options.contains(.discreteMax) {
            figures.append(Figure(column: .init("maximum", title: "MAX")) { number($0.maximum) })
        }
        if options.contains(.mostRecent) {
            let times = times
            let format = format
            figures.append(Figure(column: .init("mostRecent", title: "MOST RECENT")) { number($0.mostRecent?.value) })
            figures.append(
                Figure(column: .init("mostRecentStart", title: "MOST RECENT START")) { figures in
                    figures.mostRecent.map { times.cell($0.start, format: format) } ?? .null
                })
            figures.append(
                Figure(column: .init("mostRecentEnd", title: "MOST RECENT END")) { figures in
                    figures.mostRecent.map { times.cell($0.end, format: format) } ?? .null
                })
        }
        if options.contains(.duration) {
            let format = format
            figures.append(
                Figure(column: .init("duration", title: "DURATION")) { figures in
                    guard let micros = figures.duration else { return .null }
                    return format == .table
                        ? .string(HumanFormat.duration(micros: micros)) : .number(Double(micros) / 1e6)
                })
        }
        return figures
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
                    .string(type.identifier), .string(unit), times.cell(statistics.start, format: format),
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
    /// array; CSV rows with a leading `source` column, the merged row first with an empty source.
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
            var rows = RecordSet(columns: [.init("source")] + merged.columns)
            rows.append([.string("")] + merged.rows[0])
            let blank = Array(repeating: JSONValue.null, count: 4)
            for row in perSource ? bySource.rows : [] {
                rows.append([row[0], .string(type.identifier), .string(unit)] + blank.prefix(2) + row.dropFirst())
            }
            return rows.renderedCSV()
        }
    }
}
