import HealthModel

/// The metadata of the rows of a series that carry any, keyed by each row's change anchor (which stays with the
/// row whatever merges and deletes do), dictionary-encoded: each distinct metadata row is kept once, and each row
/// with metadata costs its anchor and the index of its metadata row (12 bytes).
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
    /// The anchors of the rows with metadata, ascending, and the index of each one's metadata row.
    private var anchors: ContiguousArray<UInt64> = []
    private var rowIndices: ContiguousArray<UInt32> = []

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
        self.anchors = ContiguousArray(anchors)
        rowIndices = ContiguousArray(indices)
    }

    /// The table dictionary-encoded, as a snapshot writes it: the distinct rows some row uses, numbered in the
    /// order their first row comes, and each row's anchor (ascending) and index into them.
    public var dictionaryEncoded: (distinct: [[String: MetadataValue]], entries: [(anchor: UInt64, index: Int)]) {
        var renumbered = [Int](repeating: -1, count: distinct.count)
        var used: [[String: MetadataValue]] = []
        var entries: [(anchor: UInt64, index: Int)] = []
        entries.reserveCapacity(anchors.count)
        for (anchor, old) in zip(anchors, rowIndices) {
            if renumbered[Int(old)] < 0 {
                renumbered[Int(old)] = used.count
                used.append(distinct[Int(old)])
            }
            entries.append((anchor, renumbered[Int(old)]))
        }
        return (used, entries)
    }

    /// Whether no row has metadata.
    public var isEmpty: Bool { anchors.isEmpty }

    /// Rows with metadata.
    public var count: Int { anchors.count }

    /// Distinct metadata rows kept.
    public var distinctCount: Int { distinct.count }

    /// The metadata of the row with `anchor`, `nil` when it has none.
    public subscript(anchor: UInt64) -> [String: MetadataValue]? {
        guard let position = position(of: anchor) else { return nil }
        return distinct[Int(rowIndices[position])]
    }

    /// Every row with metadata, anchors ascending.
    public var entries: some Sequence<(anchor: UInt64, metadata: [String: MetadataValue])> {
        zip(anchors, rowIndices).lazy.map { (anchor: $0.0, metadata: self.distinct[Int($0.1)]) }
    }

    /// The anchors of the rows with metadata, ascending.
    public var anchorsWithMetadata: ContiguousArray<UInt64> { anchors }

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
        let at = insertionPoint(of: anchor)
        if at < anchors.count, anchors[at] == anchor {
            rowIndices[at] = index
        } else {
            anchors.insert(anchor, at: at)
            rowIndices.insert(index, at: at)
        }
    }

    /// Forgets the metadata of the row with `anchor`, if any.
    public mutating func remove(anchor: UInt64) {
        guard let position = position(of: anchor) else { return }
        anchors.remove(at: position)
        rowIndices.remove(at: position)
    }

    /// Forgets the metadata of the rows whose anchors are in `removed`: one pass, whatever their number.
    mutating func remove(anchors removed: Set<UInt64>) {
        guard !removed.isEmpty, !anchors.isEmpty else { return }
        var kept = 0
        for i in anchors.indices where !removed.contains(anchors[i]) {
            anchors[kept] = anchors[i]
            rowIndices[kept] = rowIndices[i]
            kept += 1
        }
        anchors.removeLast(anchors.count - kept)
        rowIndices.removeLast(rowIndices.count - kept)
    }

    /// The first position whose anchor is at least `anchor`.
    private func insertionPoint(of anchor: UInt64) -> Int {
        if let last = anchors.last, last < anchor { return anchors.count }
        var low = 0
        var high = anchors.count
        while low < high {
            let middle = (low + high) / 2
            if anchors[middle] < anchor { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The position of `anchor`, if a row with it has metadata.
    private func position(of anchor: UInt64) -> Int? {
        let at = insertionPoint(of: anchor)
        return at < anchors.count && anchors[at] == anchor ? at : nil
    }

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
        return rows + anchors.capacity * 8 + rowIndices.capacity * 4
    }
}

extension SeriesMetadata: Equatable {
    /// Equal when the same rows have the same metadata (however the distinct rows are numbered).
    public static func == (a: SeriesMetadata, b: SeriesMetadata) -> Bool {
        a.anchors == b.anchors
            && zip(a.rowIndices, b.rowIndices).allSatisfy { a.distinct[Int($0)] == b.distinct[Int($1)] }
    }
}

extension SeriesMetadata: ExpressibleByDictionaryLiteral {
    /// Metadata rows by anchor (tests).
    public init(dictionaryLiteral elements: (UInt64, [String: MetadataValue])...) {
        self.init(elements.map { (anchor: $0.0, metadata: $0.1) })
    }
}
