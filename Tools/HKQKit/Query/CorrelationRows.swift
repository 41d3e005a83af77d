import Foundation
import HealthModel

/// `samples bloodPressure` (or `food`): one row a reading, from the stored correlations (HEALTHKIT.md §13): a
/// correlation's row has its own interval, source and UUID and the values of its members found among the samples
/// queried. Member samples that no stored correlation names (written without one) are joined by interval and
/// source instead, as `--join interval` does, with a null UUID.
struct CorrelationRows {
    /// The rows: start, end, source, one field per member type, then the correlation's uuid (not in tables).
    private(set) var records: RecordSet

    /// The rows of `correlations` whose members are among `samples` (of `types`, values in `units[i]`), and the
    /// join of the samples no correlation names; by start, newest first when `newestFirst`.
    init(
        correlations: [Correlation], samples: [Sample], types: [QuantityType], units: [HealthUnit],
        times: TimestampFormatter, format: OutputFormat, newestFirst: Bool
    ) {
        let byUUID = Dictionary(samples.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        let readings = correlations.filter { $0.members.contains { byUUID[$0.uuid] != nil } }
        let named = Set(readings.flatMap { $0.members.map(\.uuid) })
        let join = IntervalJoin(
            samples: samples.filter { !named.contains($0.uuid) }, types: types, units: units, times: times,
            format: format)
        records = join.records
        records.columns.append(.init("uuid", title: "UUID", inTable: false))
        var rows = zip(join.starts, join.records.rows.map { $0 + [.null] }).map { (start: $0, row: $1) }
        for correlation in readings {
            let values = types.map { type -> JSONValue in
                guard let member = correlation.member(type.identifier), let sample = byUUID[member.uuid] else {
                    return .null
                }
                return .number(sample.value)
            }
            let row: [JSONValue] =
                [
                    times.cell(correlation.start, format: format), times.cell(correlation.end, format: format),
                    .string(correlation.source.name),
                ] + values + [.string(correlation.uuid.uuidString)]
            rows.append((correlation.start, row))
        }
        let ordered = rows.enumerated().sorted { a, b in
            a.element.start != b.element.start
                ? (a.element.start < b.element.start) != newestFirst : a.offset < b.offset
        }
        records.rows = ordered.map(\.element.row)
    }

    /// Keeps the first `limit` rows (0 keeps all).
    mutating func truncate(to limit: Int) {
        if limit > 0, records.rows.count > limit { records.rows.removeLast(records.rows.count - limit) }
    }
}
