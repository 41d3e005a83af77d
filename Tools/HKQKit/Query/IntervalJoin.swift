import HealthModel

/// `samples --join interval`: puts samples of different types that share start, end and source on one row,
/// with one field per type (null where a type has no sample for that interval).
///
/// Rows keep the order in which they are first needed. No sample is left out: the n-th sample of a type with
/// a given interval and source goes on the n-th row of that interval and source, so a second sample of the same
/// type, interval and source opens a second row (docs/OUTPUT.md).
public struct IntervalJoin: Sendable {
    /// The joined rows.
    public private(set) var records: RecordSet
    /// The start of each row's interval, by row.
    public private(set) var starts: [Timestamp] = []

    /// Joins `samples` (already in output order) of `types`, each type's values in `units[i]`.
    public init(
        samples: [Sample], types: [QuantityType], units: [HealthUnit], times: TimestampFormatter, format: OutputFormat
    ) {
        struct Key: Hashable {
            var start: Timestamp
            var end: Timestamp
            var source: String
        }
        let typeColumns = zip(types, units).map { type, unit in
            RecordSet.Column(type.identifier, title: "\(type.identifier) (\(unit.symbol))")
        }
        records = RecordSet(
            columns: [.init("start", title: "START"), .init("end", title: "END"), .init("source", title: "SOURCE")]
                + typeColumns)
        let position = Dictionary(uniqueKeysWithValues: types.enumerated().map { ($1.identifier, $0 + 3) })
        /// The rows of each interval and source, in the order they were opened.
        var rowsOf: [Key: [Int]] = [:]
        for sample in samples {
            guard let column = position[sample.type.identifier] else { continue }
            let key = Key(start: sample.start, end: sample.end, source: sample.source.name)
            let rows = rowsOf[key, default: []]
            let row: Int
            if let free = rows.first(where: { records.rows[$0][column] == .null }) {
                row = free
            } else {
                row = records.rows.count
                rowsOf[key, default: []].append(row)
                starts.append(sample.start)
                records.append(
                    [
                        times.cell(sample.start, format: format), times.cell(sample.end, format: format),
                        .string(key.source),
                    ]
                        + Array(repeating: .null, count: types.count))
            }
            records.rows[row][column] = .number(sample.value)
        }
    }

    /// Keeps the first `limit` rows (0 keeps all).
    public mutating func truncate(to limit: Int) {
        if limit > 0, records.rows.count > limit {
            records.rows.removeLast(records.rows.count - limit)
            starts.removeLast(starts.count - limit)
        }
    }
}
