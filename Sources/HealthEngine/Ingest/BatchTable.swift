import Foundation
import HealthModel

/// Where the UUIDs of a batch table entry's rows come from.
public enum RowNaming: Hashable, Sendable {
    /// Derived from the entry's batch id and the row (``SampleBatch/derivedUUID(batchID:row:)``).
    case batch
    /// Kept as sent (or, for a small batch, as derived), one per anchor; the ledger indexes them.
    case kept(KeptUUIDs)
    /// Each row's content identity (``SampleContentIdentity``), recomputed from the row.
    case content
    /// Each row's element identity (``SampleElementIdentity``), recomputed from the row and these extras, one
    /// per anchor.
    case elements(ElementExtras)

    /// Whether the UUIDs are listed as they are (``kept``), indexed by the ledger.
    public var isKept: Bool {
        if case .kept = self { return true }
        return false
    }

    /// Whether the UUIDs are recomputed from the rows' content (``content`` and ``elements``).
    public var isContentDerived: Bool {
        switch self {
        case .content, .elements: true
        case .batch, .kept: false
        }
    }

    /// Whether `other`, the naming of the entry that follows, can extend this one's entry (cold extras stay as
    /// they lie).
    func joins(_ other: RowNaming) -> Bool {
        switch (self, other) {
        case (.content, .content): true
        case (.kept(let uuids), .kept): !uuids.isCold
        case (.elements(let extras), .elements): !extras.isCold
        default: false
        }
    }

    /// Appends the following entry's names (``joins(_:)`` holds), growing the list by an eighth, as the columns
    /// do, not by doubling. The list is moved out while it grows, so it is not shared and is extended in place
    /// (matching on a tuple of both namings would hold a second reference to it, and every append would copy
    /// the whole list).
    mutating func append(_ other: RowNaming) {
        switch other {
        case .kept(let more):
            guard case .kept(var uuids) = self else { return }
            self = .batch
            uuids.append(more)
            self = .kept(uuids)
        case .elements(let more):
            guard case .elements(var extras) = self else { return }
            self = .batch
            extras.append(more)
            self = .elements(extras)
        case .batch, .content:
            break
        }
    }

    /// How many names the list holds (``kept`` and ``elements``), or `nil` when none are listed.
    public var listed: Int? {
        switch self {
        case .kept(let list): list.count
        case .elements(let list): list.count
        case .batch, .content: nil
        }
    }

    /// Heap bytes of the listed names (cold extras take none).
    var listBytes: Int {
        switch self {
        case .kept(let uuids): uuids.heapBytes
        case .elements(let extras): extras.heapBytes
        case .batch, .content: 0
        }
    }
}

/// One batch a series applied, as its batch table keeps it: anchors `firstAnchor ..< firstAnchor + count` name
/// the batch's rows `firstRow ..< firstRow + count` (a row that turned out a duplicate keeps its anchor unused).
public struct AppliedBatch: Hashable, Sendable {
    /// The client's batch id (0 for entries rebuilt from an old snapshot). With ``naming`` other than
    /// ``RowNaming/batch`` it only labels the entry (consecutive small batches share one).
    public var batchID: UInt64
    public var firstAnchor: UInt64
    /// The batch row the first anchor names (0 except for entries rebuilt from old snapshots).
    public var firstRow: UInt32
    public var count: UInt32
    /// The client identity that wrote the batch (0: unknown).
    public var writer: UInt32
    /// Where the rows' UUIDs come from.
    public var naming: RowNaming

    /// An entry from its parts.
    public init(
        batchID: UInt64, firstAnchor: UInt64, firstRow: UInt32, count: UInt32, writer: UInt32, naming: RowNaming
    ) {
        self.batchID = batchID
        self.firstAnchor = firstAnchor
        self.firstRow = firstRow
        self.count = count
        self.writer = writer
        self.naming = naming
    }

    /// The anchors the batch took.
    public var anchors: Range<UInt64> { firstAnchor..<(firstAnchor + UInt64(count)) }

    /// The UUID kept for the row with anchor `anchor` (in ``anchors``), `nil` unless the naming is
    /// ``RowNaming/kept``.
    public func keptUUID(anchor: UInt64) -> UUID? {
        guard case .kept(let uuids) = naming else { return nil }
        return uuids[Int(anchor - firstAnchor)]
    }

    /// The UUID of the row with anchor `anchor` (which must be in ``anchors``); `content` gives the hash state of
    /// the row's content identity, asked for only when the naming derives from content.
    @inline(__always)
    func uuid(anchor: UInt64, content: () -> ContentHash128) -> UUID {
        let offset = Int(anchor - firstAnchor)
        switch naming {
        case .batch: return SampleBatch.derivedUUID(batchID: batchID, row: firstRow + UInt32(offset))
        case .kept(let uuids): return uuids[offset]
        case .content: return content().uuid
        case .elements(let extras): return SampleElementIdentity.uuid(base: content(), extras: extras[offset])
        }
    }
}

/// The batches a series applied, in anchor order: where each stored row's UUID and writer come from.
///
/// Why a table instead of UUID and writer columns: a batch takes a run of consecutive change anchors, one per
/// row (duplicates included), and every stored row keeps its anchor anyway (``Series/arrivals``). The anchor
/// therefore names the batch and the row within it, and a row's UUID and writer (one per batch) follow from a
/// binary search here. That saves 20 bytes per sample (a 16-byte UUID and a 4-byte writer id) for about 48 bytes
/// per batch. A sent UUID costs nothing more when it is the row's content identity (`hkq insert`), 8 bytes when it
/// is the row's element identity (`hkq import`: its extras), and 16 otherwise (``RowNaming``).
struct BatchTable: Sendable {
    /// Entries by ascending, disjoint anchor ranges.
    private(set) var entries: ContiguousArray<AppliedBatch> = []
    /// Entries with derived UUIDs by batch id, to find a derived UUID's row: the first entry of each batch id,
    /// and the later ones of a batch id applied again (a retry after rows were deleted, or a reused id).
    private var entryOfBatch: [UInt64: Int] = [:]
    private var laterEntriesOfBatch: [UInt64: [Int]] = [:]
    /// Whether an entry names its rows by content (``RowNaming/isContentDerived``).
    private(set) var holdsContentDerived = false

    /// An empty table.
    init() {}

    /// A table of `entries`; `nil` unless their anchor ranges are non-empty, ascending and disjoint and each UUID
    /// list has one UUID per anchor (snapshot restore).
    init?(checking entries: [AppliedBatch]) {
        self.init()
        for entry in entries {
            guard entry.count > 0, entry.naming.listed.map({ $0 == Int(entry.count) }) ?? true,
                entry.firstAnchor <= UInt64.max - UInt64(entry.count),
                self.entries.last.map({ $0.anchors.upperBound <= entry.firstAnchor }) ?? true
            else { return nil }
            append(entry)
        }
    }

    /// Whether `entry` continues the last entry: next anchor, same writer, names of a kind that joins (not
    /// derived from batch ids).
    private func joinsLastEntry(_ entry: AppliedBatch) -> Bool {
        guard let last = entries.last, last.naming.joins(entry.naming) else { return false }
        return last.writer == entry.writer && last.anchors.upperBound == entry.firstAnchor
            && UInt64(last.count) + UInt64(entry.count) <= UInt32.max
    }

    /// Batches of at most this many rows keep their UUIDs explicitly, even derived ones: an entry costs about 90
    /// bytes with its index, a kept UUID 16 plus its fingerprint, and consecutive small batches of one writer
    /// share an entry (a device sending one sample at a time would otherwise pay an entry per sample).
    static let smallBatchRows = 3

    /// Adds a batch's entry; its anchors follow every entry's so far. An entry that continues the previous one
    /// (next anchor, same writer, names of the same kind, not derived from batch ids) joins it.
    mutating func append(_ entry: AppliedBatch) {
        precondition(entries.last.map { $0.anchors.upperBound <= entry.firstAnchor } ?? true, "anchors go back")
        if joinsLastEntry(entry) {
            let last = entries.count - 1
            var naming = entries[last].naming
            entries[last].naming = .batch
            naming.append(entry.naming)
            entries[last].naming = naming
            entries[last].count += entry.count
            return
        }
        if entry.naming.isContentDerived { holdsContentDerived = true }
        if entry.naming == .batch {
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

    /// Gives entry `index` the naming `naming`, which names its rows as the old one did (the same names, lying
    /// elsewhere).
    mutating func replaceNaming(at index: Int, with naming: RowNaming) {
        precondition(naming.listed == entries[index].naming.listed, "a naming of other rows")
        entries[index].naming = naming
    }

    /// Whether a batch with derived UUIDs and id `batchID` was applied.
    func hasDerivedBatch(_ batchID: UInt64) -> Bool { entryOfBatch[batchID] != nil }

    /// Approximate heap bytes: ``tableBytes``, ``keptUUIDBytes`` and ``elementExtrasBytes``.
    var approximateBytes: Int { tableBytes + keptUUIDBytes + elementExtrasBytes }

    /// Heap bytes of the entries and their index by batch id.
    var tableBytes: Int {
        entries.capacity * MemoryLayout<AppliedBatch>.stride + entryOfBatch.capacity * 24
            + laterEntriesOfBatch.capacity * 40
    }

    /// Heap bytes of the UUIDs kept as sent.
    var keptUUIDBytes: Int { entries.reduce(0) { $0 + ($1.naming.isKept ? $1.naming.listBytes : 0) } }

    /// Heap bytes of the element identities' extras.
    var elementExtrasBytes: Int { entries.reduce(0) { $0 + ($1.naming.isKept ? 0 : $1.naming.listBytes) } }
}
