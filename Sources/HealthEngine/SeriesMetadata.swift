import HealthModel

/// The metadata of the rows of a series that carry any, keyed by each row's change anchor (which stays with the
/// row whatever merges and deletes do), dictionary-encoded: each distinct metadata row is kept once, and each row
/// with metadata costs its anchor and the index of its metadata row, bit-packed (``PackedAnchorMap``: a byte or
/// two when the rows with metadata arrived together).
///
/// Real metadata repeats (a heart rate's motion context, a sleep sample's time zone), so a series holds a few
/// distinct rows however many samples carry them; rows unique to their sample (sync identifiers) are kept as
/// before, one each. Distinct rows no sample refers to any more (after deletions) stay until the series is
/// restored from a snapshot, which keeps only the rows in use.
public struct SeriesMetadata: Sendable {
    /// Each distinct metadata row, by index.
    private var distinct: [[String: MetadataValue]] = []
    /// The index of each distinct row.
    private var indexOf: [[String: MetadataValue]: UInt32] = [:]
    /// The index of each row's metadata row, by the row's anchor.
    private var rowIndices = PackedAnchorMap()

    /// No metadata.
    public init() {}

    /// The entries of `rows` (any order; empty rows are left out).
    public init(_ rows: some Sequence<(anchor: UInt64, metadata: [String: MetadataValue])>) {
        for (anchor, row) in rows.sorted(by: { $0.anchor < $1.anchor }) { set(row, anchor: anchor) }
    }

    /// Rows as a snapshot's dictionary-encoded table gives them: `distinct` metadata rows (none empty), and for
    /// each row with metadata, anchors strictly increasing, its anchor and the index of its row in `distinct`.
    public init(distinct: [[String: MetadataValue]], anchors: [UInt64], indices: [UInt32]) {
        precondition(anchors.count == indices.count, "one index per anchor")
        self.distinct = distinct
        for (index, row) in distinct.enumerated() where indexOf[row] == nil { indexOf[row] = UInt32(index) }
        rowIndices = PackedAnchorMap(anchors: anchors, values: indices)
    }

    /// The table dictionary-encoded, as a snapshot writes it: the distinct rows some row uses, numbered in the
    /// order their first row comes, and each row's anchor (ascending) and index into them.
    public var dictionaryEncoded: (distinct: [[String: MetadataValue]], entries: [(anchor: UInt64, index: Int)]) {
        var renumbered = [Int](repeating: -1, count: distinct.count)
        var used: [[String: MetadataValue]] = []
        var entries: [(anchor: UInt64, index: Int)] = []
        entries.reserveCapacity(rowIndices.count)
        rowIndices.forEach { anchor, old in
            if renumbered[Int(old)] < 0 {
                renumbered[Int(old)] = used.count
                used.append(distinct[Int(old)])
            }
            entries.append((anchor, renumbered[Int(old)]))
        }
        return (used, entries)
    }

    /// Whether no row has metadata.
    public var isEmpty: Bool { rowIndices.count == 0 }

    /// Rows with metadata.
    public var count: Int { rowIndices.count }

    /// Distinct metadata rows kept.
    public var distinctCount: Int { distinct.count }

    /// The metadata of the row with `anchor`, `nil` when it has none.
    public subscript(anchor: UInt64) -> [String: MetadataValue]? {
        rowIndices[anchor].map { distinct[Int($0)] }
    }

    /// Every row with metadata, anchors ascending.
    public var entries: some Sequence<(anchor: UInt64, metadata: [String: MetadataValue])> {
        rowIndices.entries.lazy.map { (anchor: $0.anchor, metadata: self.distinct[Int($0.value)]) }
    }

    /// The anchors of the rows with metadata, ascending.
    public var anchorsWithMetadata: [UInt64] {
        var anchors: [UInt64] = []
        anchors.reserveCapacity(count)
        rowIndices.forEach { anchor, _ in anchors.append(anchor) }
        return anchors
    }

    /// Keeps `row` as the metadata of the row with `anchor` (an empty `row` removes it). Anchors mostly arrive
    /// in increasing order, which appends.
    public mutating func set(_ row: [String: MetadataValue], anchor: UInt64) {
        guard !row.isEmpty else { return remove(anchor: anchor) }
        let index: UInt32
        if let known = indexOf[row] {
            index = known
        } else {
            index = UInt32(distinct.count)
            distinct.append(row)
            indexOf[row] = index
        }
        rowIndices.set(index, anchor: anchor)
    }

    /// Forgets the metadata of the row with `anchor`, if any.
    public mutating func remove(anchor: UInt64) { rowIndices.remove(anchor: anchor) }

    /// Forgets the metadata of the rows whose anchors are in `removed`.
    mutating func remove(anchors removed: Set<UInt64>) { rowIndices.remove(anchors: removed) }

    /// Rough heap bytes: the anchors and indices, and each distinct row once (a dictionary, its keys and
    /// strings) with its slot in the index.
    var approximateBytes: Int {
        let rows = distinct.reduce(distinct.capacity * 8 + indexOf.capacity * 16) { total, row in
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
        return rows + rowIndices.approximateBytes
    }
}

extension SeriesMetadata: Equatable {
    /// Equal when the same rows have the same metadata (however the distinct rows are numbered).
    public static func == (a: SeriesMetadata, b: SeriesMetadata) -> Bool {
        a.count == b.count
            && zip(a.rowIndices.entries, b.rowIndices.entries).allSatisfy {
                $0.anchor == $1.anchor && a.distinct[Int($0.value)] == b.distinct[Int($1.value)]
            }
    }
}

extension SeriesMetadata: ExpressibleByDictionaryLiteral {
    /// Metadata rows by anchor (tests).
    public init(dictionaryLiteral elements: (UInt64, [String: MetadataValue])...) {
        self.init(elements.map { (anchor: $0.0, metadata: $0.1) })
    }
}
