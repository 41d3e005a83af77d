import HealthModel

/// `samples --join interval`: puts samples of different types that share start, end and source on one row,
/// with one field per type (null where a type has no sample for that interval).
///
/// Rows keep the order in which their interval first appears. A second sample of the same type, interval and
/// source cannot share the row; the first is kept and the others are counted in ``collisions``.
public struct IntervalJoin: Sendable {
    /// The joined rows.
    public private(set) var records: RecordSet
    /// Samples left out because their type already had a value on their row.
    public private(set) var collisions = 0

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
        var rowOf: [Key: Int] = [:]
        for sample in samples {
            guard let column = position[sample.type.identifier] else { continue }
            let key = Key(start: sample.start, end: sample.end, source: sample.source.name)
            let row: Int
            if let existing = rowOf[key] {
                row = existing
            } else {
                row = records.rows.count
                rowOf[key] = row
                records.append(
                    [
                        times.cell(sample.start, format: format), times.cell(sample.end, format: format),
                        .string(key.source),
                    ]
                        + Array(repeating: .null, count: types.count))
            }
            if records.rows[row][column] != .null {
                collisions += 1
            } else {
                records.rows[row][column] = .number(sample.value)
            }
        }
    }

    /// Keeps the first `limit` rows (0 keeps all).
    public mutating func truncate(to limit: Int) {
        if limit > 0, records.rows.count > limit { records.rows.removeLast(records.rows.count - limit) }
    }
}
