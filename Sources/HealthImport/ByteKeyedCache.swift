/// A bounded map from byte strings to values, looked up without allocating (the key is hashed in place).
///
/// Interns the few distinct type names, units and sources an export repeats millions of times. When it holds
/// `limit` entries it starts over empty, so a hostile file with endless distinct strings cannot grow it.
struct ByteKeyedCache<Value> {
    private var buckets: [UInt64: [(key: [UInt8], value: Value)]] = [:]
    /// Entries held now.
    private(set) var count = 0
    /// Most entries held before the cache is emptied.
    let limit: Int

    /// An empty cache holding at most `limit` entries.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The value stored for `key`, if any.
    @inline(__always)
    func value(for key: ByteSpan) -> Value? {
        guard let bucket = buckets[ByteHash.fnv64(key)] else { return nil }
        for entry in bucket where entry.key.elementsEqual(key) { return entry.value }
        return nil
    }

    /// Stores `value` for `key` (which must not be stored yet), emptying the cache first when it is full.
    mutating func insert(_ value: Value, for key: ByteSpan) {
        if count >= limit {
            buckets.removeAll()
            count = 0
        }
        buckets[ByteHash.fnv64(key), default: []].append((Array(key), value))
        count += 1
    }
}
