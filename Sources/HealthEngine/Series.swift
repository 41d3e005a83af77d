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

/// The samples of one subject and one quantity type, sorted by start, as sealed compressed blocks and a short
/// mutable head (``BlockedRows``).
///
/// Equal starts keep the order they arrived in. Each row has a start, end, value (canonical unit), source id and
/// arrival anchor; a row's UUID and writer come from its anchor through ``batches``. Rows arriving in start order
/// go to the head, which seals a block of ``BlockedRows/blockRows`` rows whenever it is full; a late row (or a
/// deletion) reseals the block it falls in. Sealed W1 rows cost well under a byte each; what a series holds
/// besides its rows (the batch table, metadata) is counted in ``approximateBytes``; the ledger's fingerprints of
/// UUIDs sent with batches are the store's index bytes. Readers decode only the blocks a query reaches (``decodedRows(in:)``,
/// ``withColumns(of:_:)``).
struct Series: Sendable {
    /// The type of every row (part of the content identity rows named by content recompute their UUIDs from).
    let type: QuantityType
    /// The rows, in start order.
    private(set) var rows = BlockedRows()
    /// The batches the rows came from, by anchor.
    private(set) var batches = BatchTable()
    /// Deletions: what ``HealthStore/changes`` reads besides the rows' arrival anchors.
    var changeLog = SeriesChangeLog()
    /// Longest `end - start` ever stored: bounds the binary search for predicates on the end date.
    private(set) var maxDuration: Int64 = 0
    var sources = SeriesSources()
    /// Batch ids, UUID fingerprints and sync versions: what makes a retry add nothing.
    var ledger = SeriesLedger()
    /// The metadata of the rows that carry any, by change anchor (HEALTHKIT.md §3): a sparse, dictionary-encoded
    /// table, so rows without metadata cost nothing; it follows the rows through merges (anchors do not move) and
    /// deletes.
    private(set) var metadata = SeriesMetadata()
    /// When a query last read the series (shared by every copy of it), for moving the blocks of the least
    /// recently used series out of memory first.
    let usage = SeriesUsage()

    var count: Int { rows.count }

    /// Puts `block` in place of sealed block `index` if that is still `current` (see
    /// ``BlockedRows/replaceBlock(at:_:with:)``).
    mutating func replaceBlock(at index: Int, _ current: SealedBlock, with block: SealedBlock) -> Bool {
        rows.replaceBlock(at: index, current, with: block)
    }

    /// An empty series of `type` sealing blocks of `blockRows` rows.
    init(type: QuantityType, blockRows: Int = 4096) {
        self.type = type
        rows = BlockedRows(blockRows: blockRows)
    }

    /// A series from stored rows and their batch table (a snapshot), already sorted by start; the ledger's
    /// fingerprints are rebuilt from the UUIDs sent with batches.
    init(
        type: QuantityType, sortedRows: SeriesRows, batches: BatchTable, maxDuration: Int64, sources: SeriesSources,
        ledger: SeriesLedger, metadata: SeriesMetadata = SeriesMetadata()
    ) {
        var blocked = BlockedRows()
        blocked.merge(sortedRows)
        self.init(
            type: type, blockedRows: blocked, batches: batches, maxDuration: maxDuration, sources: sources,
            ledger: ledger,
            metadata: metadata)
    }

    /// A series from its rows already in blocks and their batch table (a snapshot); the ledger's fingerprints
    /// are rebuilt from the UUIDs sent with batches (only the anchors of such batches' rows are decoded).
    init(
        type: QuantityType, blockedRows: BlockedRows, batches: BatchTable, maxDuration: Int64, sources: SeriesSources,
        ledger: SeriesLedger, metadata: SeriesMetadata = SeriesMetadata()
    ) {
        self.type = type
        self.metadata = metadata
        rows = blockedRows
        self.batches = batches
        self.maxDuration = maxDuration
        self.sources = sources
        self.ledger = ledger
        if batches.entries.contains(where: \.naming.isKept) {
            var hint = 0
            for anchor in blockedRows.rowsArrived(after: 0).arrived {
                if let uuid = batches.entry(ofAnchor: anchor.anchor, hint: &hint).keptUUID(anchor: anchor.anchor) {
                    self.ledger.add(uuids: CollectionOfOne(uuid))
                }
            }
        }
    }

    /// Every row, decoded (snapshots of plain columns, tests).
    var allRows: SeriesRows { rows.allRows() }

    /// Rows `range`, decoded.
    func decodedRows(in range: Range<Int>) -> SeriesRows { rows.rows(in: range) }

    /// The rows numbered `list` (any order), decoded in that order.
    func decodedRows(_ list: [Int]) -> SeriesRows { rows.rows(list) }

    /// A namer of this series' rows (``RowNamer``).
    var namer: RowNamer { RowNamer(self) }

    /// The client identity that wrote the row with anchor `anchor` (see ``BatchTable/entry(ofAnchor:hint:)``).
    func writer(anchor: UInt64, hint: inout Int) -> UInt32 {
        batches.entry(ofAnchor: anchor, hint: &hint).writer
    }

    /// The client identity that wrote row `row` (decodes the row: for single lookups).
    func writer(ofRow row: Int) -> UInt32 {
        var hint = 0
        return writer(anchor: decodedRows([row]).arrivals[0], hint: &hint)
    }

    /// Keeps `entry` as the metadata of the row with change anchor `anchor`.
    mutating func setMetadata(_ entry: [String: MetadataValue], anchor: UInt64) { metadata.set(entry, anchor: anchor) }

    /// The metadata of the row with anchor `anchor`, empty when it has none.
    func metadata(anchor: UInt64) -> [String: MetadataValue] {
        metadata.isEmpty ? [:] : metadata[anchor] ?? [:]
    }

    /// Reads the listed names of the entry starting at `placement`'s anchor from `memory`, if it still holds as
    /// many.
    mutating func placeListedNames(_ placement: NamePlacement, in memory: any BlockMemory) -> Bool {
        batches.placeListedNames(placement, in: memory)
    }

    /// Records a batch's entry in the batch table (before its rows are merged).
    mutating func registerBatch(_ entry: AppliedBatch) { batches.append(entry) }

    /// Removes the rows `removed` (ascending, distinct; `decoded` holds them, as ``decodedRows(_:)`` gives them) and
    /// forgets their UUIDs in the ledger.
    mutating func removeRows(_ removed: [Int], decoded: SeriesRows) {
        guard !removed.isEmpty else { return }
        var namer = namer
        for row in 0..<decoded.count {
            let uuid = namer.uuid(row, of: decoded)
            ledger.remove(uuid: uuid, sentWithBatch: namer.entry(ofAnchor: decoded.arrivals[row]).naming.isKept)
        }
        if !metadata.isEmpty { metadata.remove(anchors: Set(decoded.arrivals)) }
        rows.removeRows(removed)
    }

    /// First index whose start is `>= time` (``count`` when none).
    func firstIndex(startAtLeast time: Timestamp) -> Int { rows.firstIndex(startAtLeast: time) }

    /// First index whose start is `> time` (``count`` when none).
    func firstIndex(startAfter time: Timestamp) -> Int {
        time == .max ? count : firstIndex(startAtLeast: time + 1)
    }

    /// Merges rows in, keeping them sorted by start (equal starts in arrival order): rows at or after the last
    /// start go to the head; late rows reseal the blocks they land in (``BlockedRows/merge(_:)``).
    mutating func merge(_ new: SeriesRows) {
        guard new.count > 0 else { return }
        for i in 0..<new.count { maxDuration = max(maxDuration, new.ends[i] - new.starts[i]) }
        rows.merge(new)
    }

    /// Runs `body` with read-only pointers to every row, decoded (tests and small series; queries decode only
    /// what they select, ``withColumns(of:_:)``).
    func withColumns<Result>(_ body: (Columns) throws -> Result) rethrows -> Result {
        try allRows.withColumns(body)
    }

    /// Runs `body` with the rows from the first to the last selected one decoded, and `selection` renumbered
    /// to index them (row 0 of the columns is the first selected row).
    func withColumns<Result>(of selection: Selection, _ body: (Columns, Selection) throws -> Result) rethrows
        -> Result
    {
        let span = selection.span
        return try decodedRows(in: span).withColumns { c in try body(c, selection.shifted(by: -span.lowerBound)) }
    }

    /// Heap bytes held by the rows (sealed blocks and the head's capacity), the source and batch tables, the
    /// change log and the metadata (the ledger is counted apart, as the store's index bytes).
    var approximateBytes: Int {
        rows.approximateBytes + sources.approximateBytes + changeLog.approximateBytes + batches.approximateBytes
            + metadata.approximateBytes
    }

}

/// Read-only pointers to a series' columns, for the allocation-free loops of the reductions.
struct Columns {
    let starts: UnsafeBufferPointer<Timestamp>
    let ends: UnsafeBufferPointer<Timestamp>
    let values: UnsafeBufferPointer<Double>
    let sourceIDs: UnsafeBufferPointer<UInt16>
}

/// Names a series' stored rows: a row's UUID comes from its batch table entry, recomputed from the row's source,
/// start, end and value when the entry names rows by content (``RowNaming``). Each source's hash prefix is
/// computed once, and the entry found last is tried first (rows near each other mostly share one).
struct RowNamer {
    private let batches: BatchTable
    private let type: QuantityType
    private let sources: [SourceInfo]
    /// Each source's hash prefix once computed; allocated at the first row named by content.
    private var prefixes: [ContentHash128?] = []
    private var hint = 0

    /// A namer of `series`' rows.
    init(_ series: Series) {
        batches = series.batches
        type = series.type
        sources = series.sources.infos
    }

    /// The entry holding `anchor` (a stored row's).
    mutating func entry(ofAnchor anchor: UInt64) -> AppliedBatch { batches.entry(ofAnchor: anchor, hint: &hint) }

    /// The UUID of row `i` of `rows` (decoded rows of the series).
    mutating func uuid(_ i: Int, of rows: SeriesRows) -> UUID {
        let entry = entry(ofAnchor: rows.arrivals[i])
        return entry.uuid(anchor: rows.arrivals[i]) {
            contentHash(source: rows.sourceIDs[i], start: rows.starts[i], end: rows.ends[i], value: rows.values[i])
        }
    }

    /// The content identity's hash state of a row of source `source`, start, end and canonical value.
    mutating func contentHash(source: UInt16, start: Timestamp, end: Timestamp, value: Double) -> ContentHash128 {
        let id = Int(source)
        if prefixes.isEmpty { prefixes = Array(repeating: nil, count: sources.count) }
        let prefix: ContentHash128
        if let known = prefixes[id] {
            prefix = known
        } else {
            prefix = SampleContentIdentity.prefix(
                sourceName: sources[id].name.utf8, typeIdentifier: type.identifier.utf8)
            prefixes[id] = prefix
        }
        return SampleContentIdentity.hash(prefix: prefix, start: start, end: end, canonicalValue: value)
    }
}
