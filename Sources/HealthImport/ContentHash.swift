import Foundation

/// FNV-1a with a 128-bit state, fed field by field; the identity of imported samples and batches.
///
/// Written out here because Linux has no CryptoKit. Not a cryptographic hash: it names content, it does not
/// protect it. A value type: copy it to fork a prefix.
struct ContentHash128 {
    /// High and low halves of the state (offset basis 0x6c62272e07bb014262b821756295c58d).
    private(set) var high: UInt64 = 0x6c62_272e_07bb_0142
    private(set) var low: UInt64 = 0x62b8_2175_6295_c58d

    /// FNV-1a step for one byte: xor it in, then multiply by the prime 2^88 + 0x13B (mod 2^128).
    @inline(__always)
    mutating func add(_ byte: UInt8) {
        low ^= UInt64(byte)
        let (carry, product) = low.multipliedFullWidth(by: 0x13B)
        high = high &* 0x13B &+ carry &+ (low << 24)
        low = product
    }

    /// Feeds every byte of `bytes`.
    mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { add(byte) }
    }

    /// Feeds the bytes of `bytes`.
    mutating func add(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { add($0) }
    }

    /// Feeds the UTF-8 bytes of `text`.
    mutating func add(_ text: String) {
        for byte in text.utf8 { add(byte) }
    }

    /// Feeds `value` as 8 little-endian bytes.
    @inline(__always)
    mutating func add(littleEndian value: UInt64) {
        var v = value
        for _ in 0..<8 {
            add(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }

    /// The state as an RFC 9562 version-8 (custom) UUID: the hash with the version and variant bits set.
    var uuid: UUID {
        let h = high.bigEndian
        let l = low.bigEndian
        return withUnsafeBytes(of: h) { hb in
            withUnsafeBytes(of: l) { lb in
                UUID(
                    uuid: (
                        hb[0], hb[1], hb[2], hb[3], hb[4], hb[5], (hb[6] & 0x0F) | 0x80, hb[7],
                        (lb[0] & 0x3F) | 0x80, lb[1], lb[2], lb[3], lb[4], lb[5], lb[6], lb[7]
                    ))
            }
        }
    }

    /// The state folded to 64 bits.
    var folded: UInt64 { high ^ low }
}

/// Hashes byte strings to 64 bits for the interning caches, eight bytes at a time.
///
/// Only spreads keys over the cache's slots (keys are compared in full on a hit), so speed matters more than
/// strength: a multiply-rotate mix per word, FxHash style, and a final avalanche.
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
