/// A set of 64-bit fingerprints: open addressing with linear probing in one flat array, no per-entry metadata.
///
/// Cheaper than `Set<UInt64>` (no SipHash, no bitmap): one multiply to hash, 8 bytes a slot, kept between
/// 3/8 and 3/4 full once it has grown, so 10.7 to 21.3 bytes per entry. Removal shifts the following run back
/// (no tombstones). Not thread-safe by itself: it lives inside a series, under the shard's lock.
struct FingerprintSet: Sendable {
    /// Slots; 0 marks an empty one (the fingerprint 0 is stored as 1).
    private var slots: ContiguousArray<UInt64> = []
    private(set) var count = 0

    private var mask: Int { slots.count - 1 }

    @inline(__always) private static func stored(_ value: UInt64) -> UInt64 { value == 0 ? 1 : value }

    @inline(__always) private func home(_ value: UInt64) -> Int { FingerprintSet.mix(value) & mask }

    /// A full-avalanche mix (the murmur3 finalizer), so that structured fingerprints (derived UUIDs differ in a
    /// few bytes) spread over the table instead of forming long probe runs.
    @inline(__always) static func mix(_ value: UInt64) -> Int {
        var z = value
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return Int(truncatingIfNeeded: z ^ (z >> 33))
    }

    /// Whether `value` is in the set.
    func contains(_ value: UInt64) -> Bool {
        guard count > 0 else { return false }
        let value = FingerprintSet.stored(value)
        return slots.withUnsafeBufferPointer { s in
            var i = home(value)
            while true {
                let slot = s[i]
                if slot == value { return true }
                if slot == 0 { return false }
                i = (i + 1) & mask
            }
        }
    }

    /// Makes room for `total` entries without growing.
    mutating func reserve(_ total: Int) {
        var size = max(16, slots.count)
        while total * 4 > size * 3 { size *= 2 }
        if size != slots.count { rehash(size) }
    }

    /// Adds `value` (a no-op when present).
    mutating func insert(_ value: UInt64) {
        if (count + 1) * 4 > slots.count * 3 { rehash(max(16, slots.count * 2)) }
        let value = FingerprintSet.stored(value)
        let mask = mask
        let added = slots.withUnsafeMutableBufferPointer { s -> Bool in
            var i = FingerprintSet.mix(value) & mask
            while true {
                if s[i] == value { return false }
                if s[i] == 0 {
                    s[i] = value
                    return true
                }
                i = (i + 1) & mask
            }
        }
        if added { count += 1 }
    }

    /// Removes `value` if present, moving later entries of its probe run back so lookups stay correct.
    mutating func remove(_ value: UInt64) {
        guard count > 0 else { return }
        let value = FingerprintSet.stored(value)
        let mask = mask
        let removed = slots.withUnsafeMutableBufferPointer { s -> Bool in
            var i = FingerprintSet.mix(value) & mask
            while s[i] != value {
                if s[i] == 0 { return false }
                i = (i + 1) & mask
            }
            var hole = i
            var j = i
            while true {
                j = (j + 1) & mask
                let moving = s[j]
                if moving == 0 { break }
                let want = FingerprintSet.mix(moving) & mask
                // Move the entry back unless its home lies cyclically in (hole, j].
                let stays = hole <= j ? (hole < want && want <= j) : (hole < want || want <= j)
                if !stays {
                    s[hole] = moving
                    hole = j
                }
            }
            s[hole] = 0
            return true
        }
        if removed { count -= 1 }
    }

    private mutating func rehash(_ size: Int) {
        let old = slots
        slots = ContiguousArray(repeating: 0, count: size)
        count = 0
        for value in old where value != 0 { insert(value) }
    }

    /// Heap bytes of the slots.
    var approximateBytes: Int { slots.capacity * 8 }
}
