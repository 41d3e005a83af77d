import Foundation

/// A set of UUIDs for finding repeated records in a batch: open addressing over the UUID's own bits.
///
/// `Set<UUID>` runs SipHash over all 16 bytes of every UUID and rehashes as it grows; the importer's UUIDs are
/// content hashes (and other UUIDs random), so their bits are already spread: one multiply of the two halves picks
/// the slot. Sized up front for the expected count; it still grows past it (load at most 3/4). An all-zero slot
/// is empty; the nil UUID, if added, is kept by a flag. Not thread-safe.
struct UUIDSet {
    private struct Slot {
        var high: UInt64
        var low: UInt64
    }

    private var slots: [Slot]
    private var mask: Int
    private var shift: UInt64
    private var holdsNil = false
    /// UUIDs held.
    private(set) var count = 0

    /// An empty set with room for `expected` UUIDs before it grows.
    init(expected: Int = 16) {
        var capacity = 16
        while capacity * 3 < max(1, expected) * 4 { capacity *= 2 }
        slots = Array(repeating: Slot(high: 0, low: 0), count: capacity)
        mask = capacity - 1
        shift = UInt64(64 - capacity.trailingZeroBitCount)
    }

    /// Adds `uuid`; `false` (and nothing changes) when the set holds it already.
    @inline(__always)
    mutating func insert(_ uuid: UUID) -> Bool {
        let (high, low) = UUIDSet.halves(uuid)
        if high == 0, low == 0 {
            if holdsNil { return false }
            holdsNil = true
            count += 1
            return true
        }
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let mask = mask
        var index = slot(high, low)
        let inserted = slots.withUnsafeMutableBufferPointer { slots in
            while true {
                let held = slots[index]
                if held.high == high, held.low == low { return false }
                if held.high == 0, held.low == 0 { break }
                index = (index + 1) & mask
            }
            slots[index] = Slot(high: high, low: low)
            return true
        }
        if inserted { count += 1 }
        return inserted
    }

    /// Whether the set holds `uuid`.
    func contains(_ uuid: UUID) -> Bool {
        let (high, low) = UUIDSet.halves(uuid)
        if high == 0, low == 0 { return holdsNil }
        var index = slot(high, low)
        while true {
            let held = slots[index]
            if held.high == high, held.low == low { return true }
            if held.high == 0, held.low == 0 { return false }
            index = (index + 1) & mask
        }
    }

    @inline(__always)
    private func slot(_ high: UInt64, _ low: UInt64) -> Int {
        Int(truncatingIfNeeded: ((high ^ low) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    @inline(__always)
    private static func halves(_ uuid: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: uuid.uuid) {
            ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// Doubles the table and puts every UUID back.
    private mutating func grow() {
        let old = slots
        let capacity = 2 * old.count
        slots = Array(repeating: Slot(high: 0, low: 0), count: capacity)
        mask = capacity - 1
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        for held in old where held.high != 0 || held.low != 0 {
            var index = slot(held.high, held.low)
            while slots[index].high != 0 || slots[index].low != 0 { index = (index + 1) & mask }
            slots[index] = held
        }
    }
}
