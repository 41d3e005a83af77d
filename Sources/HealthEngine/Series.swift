import Foundation
import HealthModel

/// Rows ready to go into a series: canonical values, source ids resolved against the series' table.
struct SeriesRows: Sendable {
    var starts: ContiguousArray<Timestamp> = []
    var ends: ContiguousArray<Timestamp> = []
    var values: ContiguousArray<Double> = []
    var sourceIDs: ContiguousArray<UInt16> = []
    /// Change anchors (arrival order, see ``SeriesChangeLog``); empty for rows not yet stamped.
    var arrivals: ContiguousArray<UInt64> = []

    var count: Int { starts.count }

    /// Whether the starts never decrease.
    var isSortedByStart: Bool {
        starts.withUnsafeBufferPointer { s in
            var i = 1
            while i < s.count {
                if s[i] < s[i - 1] { return false }
                i += 1
            }
            return true
        }
    }

    /// Row numbers in start order, equal starts in their original order.
    func startOrder() -> [Int] {
        starts.indices.sorted { (starts[$0], $0) < (starts[$1], $1) }
    }
}

/// The samples of one subject and one quantity type, as columns sorted by start.
///
/// Equal starts keep the order they arrived in. Storage per sample: start 8, end 8, value 8, source id 2,
/// arrival anchor 8 = 34 bytes; a row's UUID and writer come from its anchor through ``batches``. Columns grow by
/// an eighth at a time once large, so capacity slack stays under 12.5 % and a large series costs at most 38.25
/// bytes per sample (measured in the engine tests).
struct Series: Sendable {
    private(set) var starts: ContiguousArray<Timestamp> = []
    private(set) var ends: ContiguousArray<Timestamp> = []
    /// Values in the type's canonical unit.
    private(set) var values: ContiguousArray<Double> = []
    /// Indices into ``sources``.
    private(set) var sourceIDs: ContiguousArray<UInt16> = []
    /// The change anchor each row arrived with (HEALTHKIT.md §9): arrival order, unlike the start order of the
    /// rows. Kept as a column (8 bytes per sample) rather than a second copy of the samples in arrival order; it
    /// also names the row's batch in ``batches``, hence its UUID and writer.
    private(set) var arrivals: ContiguousArray<UInt64> = []
    /// The batches the rows came from, by anchor.
    private(set) var batches = BatchTable()
    /// Deletions and arrival-block maxima: what ``HealthStore/changes`` reads besides ``arrivals``.
    var changeLog = SeriesChangeLog()
    /// Longest `end - start` ever stored: bounds the binary search for predicates on the end date.
    private(set) var maxDuration: Int64 = 0
    var sources = SeriesSources()
    /// Batch ids, UUID fingerprints and sync versions: what makes a retry add nothing.
    var ledger = SeriesLedger()
    /// The metadata of the rows that carry any, by change anchor (HEALTHKIT.md §3): a sparse table, so rows
    /// without metadata cost nothing; it follows the rows through merges (anchors do not move) and deletes.
    private(set) var metadata: [UInt64: [String: MetadataValue]] = [:]

    var count: Int { starts.count }

    /// An empty series.
    init() {}

    /// A series from stored columns and their batch table (a snapshot), already sorted by start; the ledger's
    /// fingerprints are rebuilt from the UUIDs sent with batches.
    init(
        sortedRows rows: SeriesRows, batches: BatchTable, maxDuration: Int64, sources: SeriesSources,
        ledger: SeriesLedger, metadata: [UInt64: [String: MetadataValue]] = [:]
    ) {
        self.metadata = metadata
        starts = rows.starts
        ends = rows.ends
        values = rows.values
        sourceIDs = rows.sourceIDs
        arrivals = rows.arrivals
        self.batches = batches
        self.maxDuration = maxDuration
        self.sources = sources
        self.ledger = ledger
        var hint = 0
        for row in arrivals.indices {
            let entry = batches.entries[entryIndex(ofRow: row, hint: &hint)]
            if entry.uuids != nil { self.ledger.add(uuids: CollectionOfOne(entry.uuid(anchor: arrivals[row]))) }
        }
        changeLog.rebuildBlocks(from: 0, arrivals: arrivals)
    }

    /// The columns as rows (shares storage until either side changes).
    var allRows: SeriesRows {
        SeriesRows(starts: starts, ends: ends, values: values, sourceIDs: sourceIDs, arrivals: arrivals)
    }

    /// The batch-table entry of row `row`; `hint` is the entry found last and is updated (rows near each other
    /// mostly share a batch, so scans pay for one binary search per batch, not per row).
    func entryIndex(ofRow row: Int, hint: inout Int) -> Int {
        guard let index = batches.entryIndex(holding: arrivals[row], hint: hint) else {
            preconditionFailure("row \(row) has anchor \(arrivals[row]) outside the batch table")
        }
        hint = index
        return index
    }

    /// The UUID of row `row` (see ``entryIndex(ofRow:hint:)`` for `hint`).
    func uuid(ofRow row: Int, hint: inout Int) -> UUID {
        batches.entries[entryIndex(ofRow: row, hint: &hint)].uuid(anchor: arrivals[row])
    }

    /// The UUID of row `row`.
    func uuid(ofRow row: Int) -> UUID {
        var hint = 0
        return uuid(ofRow: row, hint: &hint)
    }

    /// The client identity that wrote row `row` (see ``entryIndex(ofRow:hint:)`` for `hint`).
    func writer(ofRow row: Int, hint: inout Int) -> UInt32 {
        batches.entries[entryIndex(ofRow: row, hint: &hint)].writer
    }

    /// The client identity that wrote row `row`.
    func writer(ofRow row: Int) -> UInt32 {
        var hint = 0
        return writer(ofRow: row, hint: &hint)
    }

    /// Keeps `entry` as the metadata of the row with change anchor `anchor`.
    mutating func setMetadata(_ entry: [String: MetadataValue], anchor: UInt64) { metadata[anchor] = entry }

    /// The metadata of row `row`, empty when it has none.
    func metadata(ofRow row: Int) -> [String: MetadataValue] {
        metadata.isEmpty ? [:] : metadata[arrivals[row]] ?? [:]
    }

    /// Records a batch's entry in the batch table (before its rows are merged).
    mutating func registerBatch(_ entry: AppliedBatch) { batches.append(entry) }

    /// Removes the rows at `rows` (ascending, distinct) and forgets their UUIDs in the ledger.
    mutating func removeRows(_ rows: [Int]) {
        guard !rows.isEmpty else { return }
        var hint = 0
        for row in rows {
            let entry = batches.entries[entryIndex(ofRow: row, hint: &hint)]
            ledger.remove(uuid: entry.uuid(anchor: arrivals[row]), sentWithBatch: entry.uuids != nil)
            if !metadata.isEmpty { metadata[arrivals[row]] = nil }
        }
        var write = rows[0]
        var next = 0
        for read in rows[0]..<count {
            if next < rows.count, rows[next] == read {
                next += 1
                continue
            }
            starts[write] = starts[read]
            ends[write] = ends[read]
            values[write] = values[read]
            sourceIDs[write] = sourceIDs[read]
            arrivals[write] = arrivals[read]
            write += 1
        }
        starts.removeSubrange(write...)
        ends.removeSubrange(write...)
        values.removeSubrange(write...)
        sourceIDs.removeSubrange(write...)
        arrivals.removeSubrange(write...)
        changeLog.rebuildBlocks(from: rows[0], arrivals: arrivals)
    }

    /// First index whose start is `>= time` (``count`` when none).
    func firstIndex(startAtLeast time: Timestamp) -> Int {
        starts.withUnsafeBufferPointer { s in
            var low = 0
            var high = s.count
            while low < high {
                let middle = (low + high) / 2
                if s[middle] < time { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    /// First index whose start is `> time` (``count`` when none).
    func firstIndex(startAfter time: Timestamp) -> Int {
        time == .max ? count : firstIndex(startAtLeast: time + 1)
    }

    /// Merges rows in, keeping the columns sorted by start.
    ///
    /// Fast path: rows already sorted and starting at or after the last stored start are appended. Otherwise the
    /// rows are sorted and merged in place with the stored tail that starts after the earliest of them, so a late
    /// batch only moves the samples it lands among (see ``mergeBackward(_:_:order:destinations:)``).
    mutating func merge(_ rows: SeriesRows) {
        let added = rows.count
        guard added > 0 else { return }
        for i in 0..<added { maxDuration = max(maxDuration, rows.ends[i] - rows.starts[i]) }
        reserveForAppending(added)
        let sorted = rows.isSortedByStart
        if sorted, starts.last.map({ $0 <= rows.starts[0] }) ?? true {
            let first = count
            appendColumns(of: rows)
            changeLog.rebuildBlocks(from: first, arrivals: arrivals)
            return
        }
        let order = sorted ? Array(0..<added) : rows.startOrder()
        // Where each new row lands: after the stored rows starting at or before it, and the new rows before it.
        let destinations = order.indices.map { k in k + firstIndex(startAfter: rows.starts[order[k]]) }
        let tailStart = destinations[0]
        Series.mergeBackward(&starts, rows.starts, order: order, destinations: destinations)
        Series.mergeBackward(&ends, rows.ends, order: order, destinations: destinations)
        Series.mergeBackward(&values, rows.values, order: order, destinations: destinations)
        Series.mergeBackward(&sourceIDs, rows.sourceIDs, order: order, destinations: destinations)
        Series.mergeBackward(&arrivals, rows.arrivals, order: order, destinations: destinations)
        changeLog.rebuildBlocks(from: tailStart, arrivals: arrivals)
    }

    /// Merges `new` (taken in `order`, the k-th landing at `destinations[k]`, ascending) into `column` in place:
    /// the column grows by the new rows, then one pass from the end moves each stored row after the insertion
    /// points up and drops the new rows in. Costs the rows after the first insertion point, with no second copy.
    private static func mergeBackward<T>(
        _ column: inout ContiguousArray<T>, _ new: ContiguousArray<T>, order: [Int], destinations: [Int]
    ) {
        let storedCount = column.count
        column.append(contentsOf: new)
        new.withUnsafeBufferPointer { new in
            column.withUnsafeMutableBufferPointer { c in
                var write = c.count - 1
                var stored = storedCount - 1
                for k in stride(from: order.count - 1, through: 0, by: -1) {
                    let destination = destinations[k]
                    while write > destination {
                        c[write] = c[stored]
                        stored -= 1
                        write -= 1
                    }
                    c[write] = new[order[k]]
                    write -= 1
                }
            }
        }
    }

    private mutating func appendColumns(of rows: SeriesRows) {
        starts.append(contentsOf: rows.starts)
        ends.append(contentsOf: rows.ends)
        values.append(contentsOf: rows.values)
        sourceIDs.append(contentsOf: rows.sourceIDs)
        arrivals.append(contentsOf: rows.arrivals)
    }

    /// Makes room for `added` more rows: exact for small series, then growth by an eighth, never doubling.
    ///
    /// Every column is checked: the allocator may hand one column more room than asked for (its usable size),
    /// and a column left short would grow by doubling on the next append.
    private mutating func reserveForAppending(_ added: Int) {
        let needed = count + added
        let capacity = min(
            starts.capacity, ends.capacity, values.capacity, sourceIDs.capacity, arrivals.capacity)
        guard capacity < needed else { return }
        reserve(max(added, max(count / 8, 64)))
    }

    /// Makes room for `added` more rows in every column at once, exactly (recovery, which knows how many rows the
    /// log holds for the series, so the columns are not copied again and again as they grow).
    mutating func reserve(_ added: Int) {
        let target = count + added
        guard min(starts.capacity, ends.capacity, values.capacity, sourceIDs.capacity, arrivals.capacity) < target
        else { return }
        starts.reserveCapacity(target)
        ends.reserveCapacity(target)
        values.reserveCapacity(target)
        sourceIDs.reserveCapacity(target)
        arrivals.reserveCapacity(target)
    }

    /// Runs `body` with read-only pointers to the columns (valid only inside `body`).
    func withColumns<Result>(_ body: (Columns) throws -> Result) rethrows -> Result {
        try starts.withUnsafeBufferPointer { s in
            try ends.withUnsafeBufferPointer { e in
                try values.withUnsafeBufferPointer { v in
                    try sourceIDs.withUnsafeBufferPointer { ids in
                        try body(Columns(starts: s, ends: e, values: v, sourceIDs: ids))
                    }
                }
            }
        }
    }

    /// Heap bytes held by the columns (capacity, not count), the source and batch tables and the change log.
    var approximateBytes: Int {
        starts.capacity * MemoryLayout<Timestamp>.stride + ends.capacity * MemoryLayout<Timestamp>.stride
            + values.capacity * MemoryLayout<Double>.stride + sourceIDs.capacity * MemoryLayout<UInt16>.stride
            + arrivals.capacity * MemoryLayout<UInt64>.stride + sources.approximateBytes + changeLog.approximateBytes
            + batches.approximateBytes + metadataBytes
    }

    /// Rough heap bytes of ``metadata``: a table slot and a dictionary per row, keys and strings.
    private var metadataBytes: Int {
        metadata.values.reduce(metadata.capacity * 16) { total, row in
            row.reduce(total + 64) { sum, entry in
                let value: Int
                switch entry.value {
                case .string(let text): value = text.utf8.count
                case .quantity(_, let unit): value = unit.utf8.count
                case .number, .date: value = 0
                }
                return sum + 48 + entry.key.utf8.count + value
            }
        }
    }
}

/// Read-only pointers to a series' columns, for the allocation-free loops of the reductions.
struct Columns {
    let starts: UnsafeBufferPointer<Timestamp>
    let ends: UnsafeBufferPointer<Timestamp>
    let values: UnsafeBufferPointer<Double>
    let sourceIDs: UnsafeBufferPointer<UInt16>
}
