import HealthModel

/// The extras of a batch entry's element identities (``RowNaming/elements(_:)``), one per anchor: in the heap, or,
/// like a cold block's encoding, read in place from memory shared with other entries (a snapshot file mapped at
/// start-up, ``BlockMemory``), where the kernel's page cache decides what stays resident. Eight random bytes a
/// row compress to nothing, so an import's extras are worth keeping out of the heap.
public struct ElementExtras: Sendable {
    private enum Storage: Sendable {
        case heap(ContiguousArray<UInt64>)
        /// `count` values, 8 bytes little-endian each, at `offset` in `memory`.
        case cold(any BlockMemory, offset: Int, count: Int)
    }

    private var storage: Storage

    /// Extras held in the heap.
    public init(_ values: ContiguousArray<UInt64>) { storage = .heap(values) }

    /// `count` extras read in place from `memory` at `offset` (8 bytes little-endian each), which must lie inside
    /// it.
    public init(memory: any BlockMemory, offset: Int, count: Int) {
        precondition(offset >= 0 && count >= 0 && offset + count * 8 <= memory.bytes.count, "extras past the memory")
        storage = .cold(memory, offset: offset, count: count)
    }

    /// Extras held.
    public var count: Int {
        switch storage {
        case .heap(let values): values.count
        case .cold(_, _, let count): count
        }
    }

    /// Extra `i`.
    @inline(__always)
    public subscript(i: Int) -> UInt64 {
        switch storage {
        case .heap(let values): return values[i]
        case .cold(let memory, let offset, _):
            return UInt64(littleEndian: memory.bytes.loadUnaligned(fromByteOffset: offset + i * 8, as: UInt64.self))
        }
    }

    /// Whether the extras lie in shared memory rather than the heap.
    public var isCold: Bool {
        if case .cold = storage { return true }
        return false
    }

    /// Heap bytes held (0 when cold).
    var heapBytes: Int {
        if case .heap(let values) = storage { return values.capacity * 8 }
        return 0
    }

    /// Appends `other`'s extras to these heap-held ones, growing by an eighth, as the columns do. The array is
    /// moved out while it grows, so it is not shared and is extended in place.
    mutating func append(_ other: ElementExtras) {
        guard case .heap(var values) = storage else { preconditionFailure("cold extras do not grow") }
        storage = .heap([])
        let needed = values.count + other.count
        if values.capacity < needed { values.reserveCapacity(max(needed, values.count + max(values.count / 8, 16))) }
        for i in 0..<other.count { values.append(other[i]) }
        storage = .heap(values)
    }

    /// Runs `body` with the extras as bytes, 8 little-endian bytes each (as they lie in memory on every platform
    /// Swift runs hkd on; the mapped memory's own when cold), passing its error through with its type.
    public func withLittleEndianBytes<R, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> R
    ) throws(Failure) -> R {
        let outcome: Result<R, Failure>
        switch storage {
        case .heap(let values):
            outcome = values.withUnsafeBytes { raw in Result { () throws(Failure) in try body(raw) } }
        case .cold(let memory, let offset, let count):
            outcome = Result { () throws(Failure) in
                try body(UnsafeRawBufferPointer(rebasing: memory.bytes[offset..<offset + count * 8]))
            }
        }
        return try outcome.get()
    }
}

extension ElementExtras: Hashable {
    /// Equal when they hold the same extras, wherever they lie.
    public static func == (a: ElementExtras, b: ElementExtras) -> Bool {
        a.count == b.count && (0..<a.count).allSatisfy { a[$0] == b[$0] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        if count > 0 { hasher.combine(self[0]) }
    }
}

/// Where a snapshot file holds one batch entry's element extras: the series' subject, the entry's first anchor and
/// extras, and their byte offset in the file. Once the file is written and mapped, the store reads the extras
/// from there instead of its heap (``HealthStore/placeElementExtras(of:_:in:)``).
public struct ExtrasPlacement: Hashable, Sendable {
    public var subject: String
    public var firstAnchor: UInt64
    public var count: Int
    public var offset: Int

    /// A placement from its parts.
    public init(subject: String, firstAnchor: UInt64, count: Int, offset: Int) {
        (self.subject, self.firstAnchor, self.count, self.offset) = (subject, firstAnchor, count, offset)
    }
}

extension HealthStore {
    /// Makes the entries `placements` name read their element extras from `memory` (a snapshot file of `type`
    /// just written and mapped, where they lie as placed), under the shard's write lock: an entry that grew or
    /// went since the file was written keeps its own. Returns how many entries now read from `memory`. The
    /// extras are the same bytes wherever they lie; the heap's copies go, and so does the previous mapping
    /// once nothing reads from it.
    @discardableResult
    public func placeElementExtras(of type: QuantityType, _ placements: [ExtrasPlacement], in memory: any BlockMemory)
        -> Int
    {
        guard !placements.isEmpty else { return 0 }
        return shard(type).write { state in
            var placed = 0
            for placement in placements where placement.offset + placement.count * 8 <= memory.bytes.count {
                if state.series[placement.subject]?.placeElementExtras(placement, in: memory) == true { placed += 1 }
            }
            return placed
        }
    }
}

extension BatchTable {
    /// See ``Series/placeElementExtras(_:in:)``.
    mutating func placeElementExtras(_ placement: ExtrasPlacement, in memory: any BlockMemory) -> Bool {
        guard let index = entryIndex(holding: placement.firstAnchor),
            entries[index].firstAnchor == placement.firstAnchor,
            case .elements(let extras) = entries[index].naming, extras.count == placement.count
        else { return false }
        replaceNaming(
            at: index,
            with: .elements(ElementExtras(memory: memory, offset: placement.offset, count: placement.count)))
        return true
    }
}
