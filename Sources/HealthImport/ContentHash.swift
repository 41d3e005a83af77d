import HealthModel

/// Hashes byte strings to 64 bits for the interning caches, eight bytes at a time.
///
/// Spreads keys over the interning caches' slots (keys are compared in full on a hit), so speed matters more than
/// strength: a multiply-rotate mix per word, FxHash style, and a final avalanche. It also hashes the attributes of
/// an element's identity (``ElementIdentity``), which makes its output part of the stored data
/// (Protocol/STORAGE.md, *Content identity*): it never changes.
enum ByteHash {
    /// The 64-bit hash of `bytes`.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let base = bytes.baseAddress else { return 0 }
        let multiplier: UInt64 = 0x517c_c1b7_2722_0a95
        var hash = UInt64(bytes.count) &* multiplier
        var i = 0
        while i + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            hash = ((hash << 5 | hash >> 59) ^ word) &* multiplier
            i += 8
        }
        if i < bytes.count {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while i < bytes.count {
                word |= UInt64(base[i]) << shift
                shift += 8
                i += 1
            }
            hash = ((hash << 5 | hash >> 59) ^ word) &* multiplier
        }
        hash ^= hash >> 32
        hash = hash &* 0x9E37_79B9_7F4A_7C15
        return hash ^ hash >> 29
    }
}
