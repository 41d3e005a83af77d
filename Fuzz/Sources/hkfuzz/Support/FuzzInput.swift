import HealthModel

/// The fuzzer's bytes, read front to back: a few leading bytes steer a harness (limits, split points), the
/// rest is the input proper. Reading past the end yields zeros, so every input is usable.
struct FuzzInput {
    /// All the bytes.
    let bytes: [UInt8]
    /// Bytes consumed so far.
    private(set) var offset = 0

    /// The bytes libFuzzer passed.
    init(_ data: UnsafeRawBufferPointer) { bytes = Array(data) }

    /// The next byte, 0 once the input is exhausted.
    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A little-endian 16-bit number from the next two bytes.
    mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    /// The next byte reduced to an index below `count` (which must be positive).
    mutating func choice(_ count: Int) -> Int { Int(byte()) % count }

    /// Everything not consumed yet.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[min(offset, bytes.count)...])
    }
}

/// Split points for feeding `count` bytes to an incremental decoder in pieces: sizes from 0 up to
/// `maxPiece`, drawn from `seed`, summing to `count`.
func pieceSizes(count: Int, seed: UInt64, maxPiece: Int = 64) -> [Int] {
    var random = SplitMix64(seed: seed)
    var sizes: [Int] = []
    var left = count
    while left > 0 {
        let size = min(left, Int.random(in: 0...maxPiece, using: &random))
        sizes.append(size)
        left -= size
    }
    return sizes
}
