import Foundation
import HealthModel

/// A fixed-size name a batch entry lists for each of its rows: a kept UUID or an element identity's extras.
public protocol ListedName: Hashable, Sendable {
    /// Bytes one takes, in memory and in a snapshot file.
    static var byteCount: Int { get }
    /// The name lying at `offset` in `bytes`, as a snapshot file writes it.
    static func load(from bytes: UnsafeRawBufferPointer, at offset: Int) -> Self
}

extension UInt64: ListedName {
    public static var byteCount: Int { 8 }
    public static func load(from bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension UUID: ListedName {
    public static var byteCount: Int { 16 }
    public static func load(from bytes: UnsafeRawBufferPointer, at offset: Int) -> UUID {
        UUID(uuid: bytes.loadUnaligned(fromByteOffset: offset, as: uuid_t.self))
    }
}

/// The names a batch entry lists, one per anchor (``RowNaming/kept(_:)``, ``RowNaming/elements(_:)``): in the
/// heap, or, like a cold block's encoding, read in place from memory shared with other entries (a snapshot file,
/// mapped, ``BlockMemory``), where the kernel's page cache decides what stays resident. Random bytes compress to
/// nothing, so they are worth keeping out of the heap.
public struct NameList<Name: ListedName>: Sendable {
    private enum Storage: Sendable {
        case heap(ContiguousArray<Name>)
        /// `count` names at `offset` in `memory`, as a snapshot file writes them.
        case cold(any BlockMemory, offset: Int, count: Int)
    }

    private var storage: Storage

    /// Names held in the heap.
    public init(_ names: ContiguousArray<Name>) { storage = .heap(names) }

    /// `count` names read in place from `memory` at `offset`, which must lie inside it.
    public init(memory: any BlockMemory, offset: Int, count: Int) {
        precondition(
            offset >= 0 && count >= 0 && offset + count * Name.byteCount <= memory.bytes.count, "names past the memory")
        storage = .cold(memory, offset: offset, count: count)
    }

    /// Names held.
    public var count: Int {
        switch storage {
        case .heap(let names): names.count
        case .cold(_, _, let count): count
        }
    }

    /// Name `i`.
    @inline(__always)
    public subscript(i: Int) -> Name {
        switch storage {
        case .heap(let names): return names[i]
        case .cold(let memory, let offset, _): return Name.load(from: memory.bytes, at: offset + i * Name.byteCount)
        }
    }

    /// Whether the names lie in shared memory rather than the heap.
    public var isCold: Bool {
        if case .cold = storage { return true }
        return false
    }

    /// Heap bytes held (0 when cold).
    var heapBytes: Int {
        if case .heap(let names) = storage { return names.capacity * Name.byteCount }
        return 0
    }

    /// Appends `other`'s names to these heap-held ones, growing by an eighth, as the columns do. The array is
    /// moved out while it grows, so it is not shared and is extended in place.
    mutating func append(_ other: NameList) {
        guard case .heap(var names) = storage else { preconditionFailure("cold names do not grow") }
        storage = .heap([])
        let needed = names.count + other.count
        if names.capacity < needed { names.reserveCapacity(max(needed, names.count + max(names.count / 8, 16))) }
        if case .heap(let more) = other.storage {
            names.append(contentsOf: more)
        } else {
            for i in 0..<other.count { names.append(other[i]) }
        }
        storage = .heap(names)
    }

    /// Runs `body` with the names as a snapshot file holds them (their bytes as they lie in memory, little-endian
    /// on every platform Swift runs hkd on; the mapped memory's own when cold), passing its error through with
    /// its type.
    public func withBytes<R, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> R) throws(Failure)
        -> R
    {
        let outcome: Result<R, Failure>
        switch storage {
        case .heap(let names):
            outcome = names.withUnsafeBytes { raw in Result { () throws(Failure) in try body(raw) } }
        case .cold(let memory, let offset, let count):
            outcome = Result { () throws(Failure) in
                try body(UnsafeRawBufferPointer(rebasing: memory.bytes[offset..<offset + count * Name.byteCount]))
            }
        }
        return try outcome.get()
    }
}

extension NameList: Hashable {
    /// Equal when they hold the same names, wherever they lie.
    public static func == (a: NameList, b: NameList) -> Bool {
        a.count == b.count && (0..<a.count).allSatisfy { a[$0] == b[$0] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        if count > 0 { hasher.combine(self[0]) }
    }
}

/// UUIDs kept as sent (``RowNaming/kept(_:)``).
public typealias KeptUUIDs = NameList<UUID>

/// Element identities' extras (``RowNaming/elements(_:)``).
public typealias ElementExtras = NameList<UInt64>

/// Where a snapshot file holds one batch entry's listed names (kept UUIDs or element extras): the series'
/// subject, the entry's first anchor and names, and their byte offset in the file. Once the file is written and
/// mapped, the store reads the names from there instead of its heap (``HealthStore/placeListedNames(of:_:in:)``).
public struct NamePlacement: Hashable, Sendable {
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
    /// Makes the entries `placements` name read their listed names from `memory` (a snapshot file of `type`
    /// just written and mapped, where they lie as placed), under the shard's write lock: an entry that grew
    /// since the file was written keeps its own. Returns how many entries now read from `memory`. The names are
    /// the same bytes wherever they lie; the heap's copies go, and so does the previous mapping once nothing
    /// reads from it.
    @discardableResult
    public func placeListedNames(of type: QuantityType, _ placements: [NamePlacement], in memory: any BlockMemory)
        -> Int
    {
        guard !placements.isEmpty else { return 0 }
        return shard(type).write { state in
            var placed = 0
            for placement in placements where placement.offset <= memory.bytes.count {
                if state.series[placement.subject]?.placeListedNames(placement, in: memory) == true { placed += 1 }
            }
            return placed
        }
    }
}

extension BatchTable {
    /// See ``Series/placeListedNames(_:in:)``.
    mutating func placeListedNames(_ placement: NamePlacement, in memory: any BlockMemory) -> Bool {
        guard let index = entryIndex(holding: placement.firstAnchor),
            entries[index].firstAnchor == placement.firstAnchor, entries[index].naming.listed == placement.count
        else { return false }
        let (offset, count) = (placement.offset, placement.count)
        switch entries[index].naming {
        case .kept:
            guard offset + count * UUID.byteCount <= memory.bytes.count else { return false }
            replaceNaming(at: index, with: .kept(KeptUUIDs(memory: memory, offset: offset, count: count)))
        case .elements:
            guard offset + count * UInt64.byteCount <= memory.bytes.count else { return false }
            replaceNaming(at: index, with: .elements(ElementExtras(memory: memory, offset: offset, count: count)))
        case .batch, .content:
            return false
        }
        return true
    }
}
