import Foundation
import HealthModel

/// One batch a series applied, as its batch table keeps it: anchors `firstAnchor ..< firstAnchor + count` name
/// the batch's rows `firstRow ..< firstRow + count` (a row that turned out a duplicate keeps its anchor unused).
public struct AppliedBatch: Hashable, Sendable {
    /// The client's batch id (0 for entries rebuilt from an old snapshot). With ``uuids`` set it only labels the
    /// entry (consecutive small batches share one); without, it derives the UUIDs.
    public var batchID: UInt64
    public var firstAnchor: UInt64
    /// The batch row the first anchor names (0 except for entries rebuilt from old snapshots).
    public var firstRow: UInt32
    public var count: UInt32
    /// The client identity that wrote the batch (0: unknown).
    public var writer: UInt32
    /// The UUIDs kept explicitly, one per anchor: sent with the batch, or derived ones of small batches (see
    /// ``BatchTable/smallBatchRows``); `nil` when they derive from batch id and row.
    public var uuids: ContiguousArray<UUID>?

    /// An entry from its parts.
    public init(
        batchID: UInt64, firstAnchor: UInt64, firstRow: UInt32, count: UInt32, writer: UInt32,
        uuids: ContiguousArray<UUID>?
    ) {
        self.batchID = batchID
        self.firstAnchor = firstAnchor
        self.firstRow = firstRow
        self.count = count
        self.writer = writer
        self.uuids = uuids
    }

    /// The anchors the batch took.
    public var anchors: Range<UInt64> { firstAnchor..<(firstAnchor + UInt64(count)) }

    /// The UUID of the row with anchor `anchor` (which must be in ``anchors``).
    public func uuid(anchor: UInt64) -> UUID {
        let offset = Int(anchor - firstAnchor)
        if let uuids { return uuids[offset] }
        return SampleBatch.derivedUUID(batchID: batchID, row: firstRow + UInt32(offset))
    }
}

/// The batches a series applied, in anchor order: where each stored row's UUID and writer come from.
///
/// Why a table instead of UUID and writer columns: a batch takes a run of consecutive change anchors, one per
/// row (duplicates included), and every stored row keeps its anchor anyway (``Series/arrivals``). The anchor
/// therefore names the batch and the row within it, and a row's UUID (derived from batch id and row, or sent
/// with the batch) and writer (one per batch) follow from a binary search here. That saves 20 bytes per sample
/// (a 16-byte UUID and a 4-byte writer id) for about 48 bytes per batch, plus 16 bytes per row only for batches
/// that came with their own UUIDs.
struct BatchTable: Sendable {
    /// Entries by ascending, disjoint anchor ranges.
    private(set) var entries: ContiguousArray<AppliedBatch> = []
    /// Entries with derived UUIDs by batch id, to find a derived UUID's row: the first entry of each batch id,
    /// and the later ones of a batch id applied again (a retry after rows were deleted, or a reused id).
    private var entryOfBatch: [UInt64: Int] = [:]
    private var laterEntriesOfBatch: [UInt64: [Int]] = [:]

    /// An empty table.
    init() {}

    /// A table of `entries`; `nil` unless their anchor ranges are non-empty, ascending and disjoint and each UUID
    /// list has one UUID per anchor (snapshot restore).
    init?(checking entries: [AppliedBatch]) {
        self.init()
        for entry in entries {
            guard entry.count > 0, entry.uuids.map({ $0.count == Int(entry.count) }) ?? true,
                entry.firstAnchor <= UInt64.max - UInt64(entry.count),
                self.entries.last.map({ $0.anchors.upperBound <= entry.firstAnchor }) ?? true
            else { return nil }
            append(entry)
        }
    }

    /// Whether `entry` (with explicit UUIDs) continues the last entry: next anchor, same writer, explicit UUIDs.
    private func joinsLastEntry(_ entry: AppliedBatch) -> Bool {
        guard let last = entries.last, last.uuids != nil else { return false }
        return last.writer == entry.writer && last.anchors.upperBound == entry.firstAnchor
            && UInt64(last.count) + UInt64(entry.count) <= UInt32.max
    }

    /// Batches of at most this many rows keep their UUIDs explicitly, even derived ones: an entry costs about 90
    /// bytes with its index, a kept UUID 16 plus its fingerprint, and consecutive small batches of one writer
    /// share an entry (a device sending one sample at a time would otherwise pay an entry per sample).
    static let smallBatchRows = 3

    /// Adds a batch's entry; its anchors follow every entry's so far. An entry with explicit UUIDs that
    /// continues the previous one (next anchor, same writer, explicit UUIDs too) joins it.
    mutating func append(_ entry: AppliedBatch) {
        precondition(entries.last.map { $0.anchors.upperBound <= entry.firstAnchor } ?? true, "anchors go back")
        if let uuids = entry.uuids, joinsLastEntry(entry) {
            // Move the kept UUIDs out while they grow, so the array is not shared with the entry and is extended
            // in place (a copy held meanwhile would make every append copy the whole array).
            let last = entries.count - 1
            var kept = entries[last].uuids.take()!
            let needed = kept.count + uuids.count
            if kept.capacity < needed {
                // Grow by an eighth, as the columns do, not by doubling.
                kept.reserveCapacity(max(needed, kept.count + max(kept.count / 8, 16)))
            }
            kept.append(contentsOf: uuids)
            entries[last].uuids = kept
            entries[last].count += entry.count
            return
        }
        if entry.uuids == nil {
            if entryOfBatch[entry.batchID] == nil {
                entryOfBatch[entry.batchID] = entries.count
            } else {
                laterEntriesOfBatch[entry.batchID, default: []].append(entries.count)
            }
        }
        entries.append(entry)
    }

    /// The entry holding `anchor`, which a stored row's anchor always lies in; `hint` is the index of the entry
    /// found last and is updated (rows near each other mostly share a batch, so scans pay for one binary search
    /// per batch, not per row).
    func entry(ofAnchor anchor: UInt64, hint: inout Int) -> AppliedBatch {
        guard let index = entryIndex(holding: anchor, hint: hint) else {
            preconditionFailure("a row has anchor \(anchor) outside the batch table")
        }
        hint = index
        return entries[index]
    }

    /// The index of the entry holding `anchor`; `hint` (the last answer) is tried first, since neighbouring rows
    /// mostly come from one batch.
    func entryIndex(holding anchor: UInt64, hint: Int = 0) -> Int? {
        if hint < entries.count, entries[hint].anchors.contains(anchor) { return hint }
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].firstAnchor <= anchor { low = middle + 1 } else { high = middle }
        }
        guard low > 0, entries[low - 1].anchors.contains(anchor) else { return nil }
        return low - 1
    }

    /// The anchors a UUID derived from a batch in this table was given (one per application of its batch id;
    /// at most one of them is stored); empty for any other UUID.
    func anchors(ofDerived uuid: UUID) -> [UInt64] {
        guard let (batchID, row) = SampleBatch.batchAndRow(ofDerived: uuid), let first = entryOfBatch[batchID]
        else { return [] }
        return ([first] + (laterEntriesOfBatch[batchID] ?? [])).compactMap { index in
            let entry = entries[index]
            guard row >= entry.firstRow, row - entry.firstRow < entry.count else { return nil }
            return entry.firstAnchor + UInt64(row - entry.firstRow)
        }
    }

    /// Whether a batch with derived UUIDs and id `batchID` was applied.
    func hasDerivedBatch(_ batchID: UInt64) -> Bool { entryOfBatch[batchID] != nil }

    /// Approximate heap bytes: ``tableBytes`` and ``keptUUIDBytes``.
    var approximateBytes: Int { tableBytes + keptUUIDBytes }

    /// Heap bytes of the entries and their index by batch id.
    var tableBytes: Int {
        entries.capacity * MemoryLayout<AppliedBatch>.stride + entryOfBatch.capacity * 24
            + laterEntriesOfBatch.capacity * 40
    }

    /// Heap bytes of the UUIDs kept explicitly.
    var keptUUIDBytes: Int { entries.reduce(0) { $0 + ($1.uuids?.capacity ?? 0) * 16 } }
}
