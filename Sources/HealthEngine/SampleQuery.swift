import Foundation
import HealthModel

extension Series {
    /// The selected rows in the order `sort` asks for, at most `limit` of them (0: all).
    /// Equal sort keys fall back to the start, then to storage order (reversed for descending sorts).
    func orderedRows(_ selection: Selection, sort: SampleSort, limit: Int) -> [Int] {
        let wanted = limit > 0 ? min(limit, selection.count) : selection.count
        switch sort {
        case .startAscending:
            return Array(selection.rows.prefix(wanted))
        case .startDescending:
            return Array(selection.runs.reversed().lazy.flatMap { $0.reversed() }.prefix(wanted))
        case .endAscending, .endDescending:
            let span = selection.span
            let window = decodedRows(in: span)
            var rows = Array(selection.rows)
            let descending = sort == .endDescending
            rows.sort { a, b in
                let (i, j) = (a - span.lowerBound, b - span.lowerBound)
                let keyA = (window.ends[i], window.starts[i], a)
                let keyB = (window.ends[j], window.starts[j], b)
                return descending ? keyA > keyB : keyA < keyB
            }
            return Array(rows.prefix(wanted))
        }
    }

    /// The columns of `rows`, values converted by `unit`, with a source dictionary of the sources they use.
    func queryResult(rows list: [Int], type: QuantityType, unit: UnitTransform) -> SampleQueryResult {
        queryResult(decoded: decodedRows(list), type: type, unit: unit)
    }

    /// ``queryResult(rows:type:unit:)`` of rows already decoded.
    func queryResult(decoded rows: SeriesRows, type: QuantityType, unit: UnitTransform) -> SampleQueryResult {
        var resultIndexOfSource = [UInt32?](repeating: nil, count: sources.count)
        var resultSources: [SourceInfo] = []
        var sourceIndices: [UInt32] = []
        sourceIndices.reserveCapacity(rows.count)
        for id in rows.sourceIDs.lazy.map(Int.init) {
            if resultIndexOfSource[id] == nil {
                resultIndexOfSource[id] = UInt32(resultSources.count)
                resultSources.append(sources.infos[id])
            }
            sourceIndices.append(resultIndexOfSource[id]!)
        }
        var hint = 0
        var rowMetadata: [[String: MetadataValue]]?
        if !metadata.isEmpty {
            let found = rows.arrivals.map { metadata(anchor: $0) }
            if found.contains(where: { !$0.isEmpty }) { rowMetadata = found }
        }
        return SampleQueryResult(
            type: type, unit: unit.unit, sources: resultSources, starts: Array(rows.starts), ends: Array(rows.ends),
            values: rows.values.map { unit.level($0) }, sourceIndices: sourceIndices,
            uuids: rows.arrivals.map { uuid(anchor: $0, hint: &hint) }, metadata: rowMetadata)
    }
}
