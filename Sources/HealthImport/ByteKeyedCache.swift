import Foundation

/// A bounded map from byte strings to values, looked up without allocating (the key is hashed in place).
///
/// Interns the few distinct type names, units and sources an export repeats millions of times: an
/// open-addressing table indexed by the FNV-1a hash of the key, keys compared with `memcmp`. When it holds
/// `limit` entries it starts over empty, so a hostile file with endless distinct strings cannot grow it.
struct ByteKeyedCache<Value> {
    private struct Slot {
        var hash: UInt64
        var key: [UInt8]
        var value: Value
    }

    private var slots: [Slot?]
    private let mask: Int
    /// Entries held now.
    private(set) var count = 0
    /// Most entries held before the cache is emptied.
    let limit: Int

    /// An empty cache holding at most `limit` entries.
    init(limit: Int) {
        self.limit = max(1, limit)
        var capacity = 8
        while capacity < 2 * self.limit { capacity *= 2 }
        slots = Array(repeating: nil, count: capacity)
        mask = capacity - 1
    }

    /// The slot of the last key found: exports repeat a key record after record (they list records by type), so
    /// it is compared first, without hashing.
    private var lastFound = 0

    /// The value stored for `key`, if any.
    @inline(__always)
    mutating func value(for key: ByteSpan) -> Value? {
        if let slot = slots[lastFound], ByteKeyedCache.equal(slot.key, key) { return slot.value }
        let hash = ByteHash.hash(key)
        var index = Int(truncatingIfNeeded: hash) & mask
        while let slot = slots[index] {
            if slot.hash == hash, ByteKeyedCache.equal(slot.key, key) {
                lastFound = index
                return slot.value
            }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Stores `value` for `key` (which must not be stored yet), emptying the cache first when it is full.
    mutating func insert(_ value: Value, for key: ByteSpan) {
        if count >= limit {
            for i in slots.indices { slots[i] = nil }
            count = 0
        }
        let hash = ByteHash.hash(key)
        var index = Int(truncatingIfNeeded: hash) & mask
        while slots[index] != nil { index = (index + 1) & mask }
        slots[index] = Slot(hash: hash, key: Array(key), value: value)
        count += 1
    }

    @inline(__always)
    private static func equal(_ stored: [UInt8], _ key: ByteSpan) -> Bool {
        guard stored.count == key.count else { return false }
        guard key.count > 0, let base = key.baseAddress else { return true }
        return stored.withUnsafeBufferPointer { memcmp($0.baseAddress!, base, key.count) == 0 }
    }
}
