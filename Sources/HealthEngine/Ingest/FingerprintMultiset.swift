/// A multiset of 48-bit fingerprints: open addressing with linear probing, each slot 6 bytes of one byte array
/// (one cache line per probe, mostly), no per-entry metadata.
///
/// A 64-bit fingerprint is folded to 48 bits (``folded(_:)``), so two values may share an entry's bits: each
/// ``insert(_:)`` adds an occurrence and each ``remove(_:)`` takes one away, so removing one of two colliding values
/// (each removed only after it was inserted) never hides the other (``contains(_:)`` may answer true for a value never inserted, about once in 2^48 / n
/// lookups, never false for one inserted and not removed). One multiply to hash, kept between 3/8 and 3/4 full once it
/// has grown, so 8 to 16 bytes per entry. Removal shifts the following run back (no tombstones). Not thread-safe by
/// itself: it lives inside a series, under the shard's lock.
struct FingerprintMultiset: Sendable {
    /// Bytes per slot.
    private static let slotBytes = 6
    /// The low 48 bits of a word.
    private static let valueMask: UInt64 = 0xFFFF_FFFF_FFFF
    /// The slots, 6 bytes each (little-endian), then 2 bytes so that every slot can be read as a 64-bit word; a
    /// slot of 0 is empty (the folded value 0 is stored as 1).
    private var bytes: ContiguousArray<UInt8> = []
    /// Slots in the table (a power of two, or 0).
    private var slots = 0
    /// Occurrences held.
    private(set) var count = 0

    private var mask: Int { slots - 1 }

    /// `value`'s 48 bits as stored: its top 16 bits folded into the rest, 0 taken as 1.
    @inline(__always) static func folded(_ value: UInt64) -> UInt64 {
        let bits = (value ^ (value >> 48)) & valueMask
        return bits == 0 ? 1 : bits
    }

    /// A full-avalanche mix (the murmur3 finalizer), so that structured fingerprints (derived UUIDs differ in a
    /// few bytes) spread over the table instead of forming long probe runs.
    @inline(__always) static func mix(_ value: UInt64) -> Int {
        var z = value
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return Int(truncatingIfNeeded: z ^ (z >> 33))
    }

    /// The value in slot `i` (0: empty).
    @inline(__always) private static func slot(_ raw: UnsafeRawBufferPointer, _ i: Int) -> UInt64 {
        UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * slotBytes, as: UInt64.self)) & valueMask
    }

    /// Writes `value` (48 bits) into slot `i`.
    @inline(__always) private static func setSlot(_ raw: UnsafeMutableRawBufferPointer, _ i: Int, _ value: UInt64) {
        raw.storeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian, toByteOffset: i * slotBytes, as: UInt32.self)
        raw.storeBytes(
            of: UInt16(truncatingIfNeeded: value >> 32).littleEndian, toByteOffset: i * slotBytes + 4, as: UInt16.self)
    }

    /// Whether `value` was inserted more often than removed (or shares its 48 bits with one that was).
    func contains(_ value: UInt64) -> Bool {
        guard count > 0 else { return false }
        let value = FingerprintMultiset.folded(value)
        let mask = mask
        return bytes.withUnsafeBytes { raw in
            var i = FingerprintMultiset.mix(value) & mask
            while true {
                let held = FingerprintMultiset.slot(raw, i)
                if held == value { return true }
                if held == 0 { return false }
                i = (i + 1) & mask
            }
        }
    }

    /// Makes room for `total` occurrences without growing.
    mutating func reserve(_ total: Int) {
        var size = max(16, slots)
        while total * 4 > size * 3 { size *= 2 }
        if size != slots { rehash(size) }
    }

    /// Adds an occurrence of `value`.
    mutating func insert(_ value: UInt64) {
        if (count + 1) * 4 > slots * 3 { rehash(max(16, slots * 2)) }
        place(FingerprintMultiset.folded(value))
        count += 1
    }

    /// Puts a folded value in the first empty slot of its run (room is there).
    private mutating func place(_ value: UInt64) {
        let mask = mask
        bytes.withUnsafeMutableBytes { raw in
            var i = FingerprintMultiset.mix(value) & mask
            while FingerprintMultiset.slot(UnsafeRawBufferPointer(raw), i) != 0 { i = (i + 1) & mask }
            FingerprintMultiset.setSlot(raw, i, value)
        }
    }

    /// Removes one occurrence of `value` if there is one, moving later entries of its probe run back so lookups
    /// stay correct.
    mutating func remove(_ value: UInt64) {
        guard count > 0 else { return }
        let value = FingerprintMultiset.folded(value)
        let mask = mask
        let removed = bytes.withUnsafeMutableBytes { raw -> Bool in
            let read = UnsafeRawBufferPointer(raw)
            var i = FingerprintMultiset.mix(value) & mask
            while true {
                let held = FingerprintMultiset.slot(read, i)
                if held == value { break }
                if held == 0 { return false }
                i = (i + 1) & mask
            }
            var hole = i
            var j = i
            while true {
                j = (j + 1) & mask
                let moving = FingerprintMultiset.slot(read, j)
                if moving == 0 { break }
                let want = FingerprintMultiset.mix(moving) & mask
                // Move the entry back unless its home lies cyclically in (hole, j].
                let stays = hole <= j ? (hole < want && want <= j) : (hole < want || want <= j)
                if !stays {
                    FingerprintMultiset.setSlot(raw, hole, moving)
                    hole = j
                }
            }
            FingerprintMultiset.setSlot(raw, hole, 0)
            return true
        }
        if removed { count -= 1 }
    }

    private mutating func rehash(_ size: Int) {
        let old = bytes
        let oldSlots = slots
        bytes = ContiguousArray(repeating: 0, count: size * FingerprintMultiset.slotBytes + 2)
        slots = size
        old.withUnsafeBytes { raw in
            for i in 0..<oldSlots {
                let value = FingerprintMultiset.slot(raw, i)
                if value != 0 { place(value) }
            }
        }
    }

    /// Heap bytes of the slots.
    var approximateBytes: Int { bytes.capacity }
}
