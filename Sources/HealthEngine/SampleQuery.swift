import Foundation
import HealthModel

extension Series {
    /// The selected rows in the order `sort` asks for, those after `position` when given, at most `limit` of
    /// them (0: all), and whether the limit left rows out. The order is ``SamplePosition``'s: the sort key, then
    /// the start, then the change anchor (rows of equal start are stored in arrival order, so by anchor),
    /// reversed for the descending sorts.
    func orderedRows(_ selection: Selection, sort: SampleSort, limit: Int, after position: SamplePosition? = nil)
        -> (rows: [Int], cut: Bool)
    {
        /// The first `limit` of `rows` (all for 0), and whether that left some out.
        func limited<Rows: Sequence<Int>>(_ rows: Rows, count: Int) -> (rows: [Int], cut: Bool) {
            guard limit > 0, limit < count else { return (Array(rows), false) }
            return (Array(rows.prefix(limit)), true)
        }
        switch sort {
        case .startAscending, .startDescending:
            let selection = position.map { startRows(of: selection, after: $0) } ?? selection
            if sort == .startAscending { return limited(selection.rows, count: selection.count) }
            return limited(selection.runs.reversed().lazy.flatMap { $0.reversed() }, count: selection.count)
        case .endAscending, .endDescending:
            let span = selection.span
            let window = decodedRows(in: span)
            var rows = Array(selection.rows)
            if let position {
                rows.removeAll { row in
                    let local = row - span.lowerBound
                    return !position.isBefore(
                        key: window.ends[local], start: window.starts[local], anchor: window.arrivals[local])
                }
            }
            let descending = sort == .endDescending
            rows.sort { a, b in
                let (i, j) = (a - span.lowerBound, b - span.lowerBound)
                let keyA = (window.ends[i], window.starts[i], window.arrivals[i])
                let keyB = (window.ends[j], window.starts[j], window.arrivals[j])
                return descending ? keyA > keyB : keyA < keyB
            }
            return limited(rows, count: rows.count)
        }
    }

    /// The rows of `selection` that come after `position`, a position in a start order: a binary search finds
    /// the rows starting at the position's start, and only those are decoded, to compare their anchors.
    private func startRows(of selection: Selection, after position: SamplePosition) -> Selection {
        let equal = firstIndex(startAtLeast: position.start)..<firstIndex(startAfter: position.start)
        var after = Selection()
        /// Adds the selected rows starting at the position's start that come after it.
        func addEqualStarts() {
            let candidates = selection.clipped(to: equal)
            guard !candidates.isEmpty else { return }
            let span = candidates.span
            let window = decodedRows(in: span)
            for row in candidates.rows {
                let local = row - span.lowerBound
                let start = window.starts[local]
                if position.isBefore(key: start, start: start, anchor: window.arrivals[local]) { after.add(row) }
            }
        }
        if position.sort.isDescending {
            after.add(selection.clipped(to: 0..<equal.lowerBound))
            addEqualStarts()
        } else {
            addEqualStarts()
            after.add(selection.clipped(to: equal.upperBound..<count))
        }
        return after
    }

    /// The position of row `index` of `rows` (decoded rows) in `sort`.
    func position(of index: Int, in rows: SeriesRows, sort: SampleSort) -> SamplePosition {
        SamplePosition(sort: sort, start: rows.starts[index], end: rows.ends[index], anchor: rows.arrivals[index])
    }

    /// The columns of decoded `rows`, values converted by `unit`, with a source dictionary of the sources they use.
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
        var namer = namer
        var rowMetadata: [[String: MetadataValue]]?
        if !metadata.isEmpty {
            let found = rows.arrivals.map { metadata(anchor: $0) }
            if found.contains(where: { !$0.isEmpty }) { rowMetadata = found }
        }
        return SampleQueryResult(
            type: type, unit: unit.unit, sources: resultSources, starts: Array(rows.starts), ends: Array(rows.ends),
            values: rows.values.map { unit.level($0) }, sourceIndices: sourceIndices,
            uuids: rows.arrivals.indices.map { namer.uuid($0, of: rows) }, metadata: rowMetadata)
    }
}
