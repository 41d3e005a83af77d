/// Why the bytes of a sealed block were refused (``SealedBlock/init(validating:)``).
public struct BlockDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong, for logs and tests.
    public let reason: String

    init(_ reason: String) { self.reason = reason }

    public var description: String { "sealed block: \(reason)" }
}

/// Appends the primitive fields of the block format: little-endian fixed-width integers and LEB128 varints.
struct BlockWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func fixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// Bytes a varint of `value` takes.
    static func varintLength(_ value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }
}

/// Reads the primitive fields of the block format from bytes that may be damaged: every read checks the bytes
/// left and throws ``BlockDecodingError`` instead of trapping.
struct BlockReader {
    let base: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ base: UnsafeRawBufferPointer, offset: Int = 0) {
        self.base = base
        self.offset = offset
    }

    var remaining: Int { base.count - offset }

    mutating func byte() throws(BlockDecodingError) -> UInt8 {
        guard offset < base.count else { throw BlockDecodingError("truncated") }
        defer { offset += 1 }
        return base[offset]
    }

    mutating func fixed64() throws(BlockDecodingError) -> UInt64 {
        guard remaining >= 8 else { throw BlockDecodingError("truncated") }
        defer { offset += 8 }
        return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// A LEB128 varint. A one-byte varint (most gaps, run lengths and ids) takes a branch of its own, which the
    /// processor predicts well where such varints follow one another. With eight bytes left, a varint of two to
    /// eight bytes (56 bits: every start delta and value a column holds in practice) is read from one unaligned
    /// load without a branch on its length: its last byte is the first without the high bit, and its 7-bit
    /// groups are packed together in three steps. Near the end of the bytes, and above eight bytes,
    /// ``longVarint()`` reads byte by byte.
    @inline(__always)
    mutating func varint() throws(BlockDecodingError) -> UInt64 {
        guard offset < base.count else { throw BlockDecodingError("truncated") }
        let first = base[offset]
        if first < 0x80 {
            offset += 1
            return UInt64(first)
        }
        if let value = loadedVarint() { return value }
        return try longVarint()
    }

    /// ``varint()`` without the branch for one byte: for varints whose lengths vary at random from one to the
    /// next (the values of a column's exceptions), where that branch would be mispredicted half of the time.
    @inline(__always)
    mutating func unpredictableVarint() throws(BlockDecodingError) -> UInt64 {
        if let value = loadedVarint() { return value }
        return try longVarint()
    }

    /// A varint of up to eight bytes read from one unaligned load when eight bytes are left, else nil.
    @inline(__always)
    private mutating func loadedVarint() -> UInt64? {
        guard remaining >= 8 else { return nil }
        let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        let stops = ~word & 0x8080_8080_8080_8080
        guard stops != 0 else { return nil }
        let lastBit = UInt64(stops.trailingZeroBitCount)  // 7, 15, … 63: the last byte's high bit
        offset += Int(lastBit + 1) >> 3
        // The varint's bytes alone (a shift by 64 gives 0, so eight bytes keep the whole word).
        var groups = word & ((1 << (lastBit + 1)) &- 1) & 0x7F7F_7F7F_7F7F_7F7F
        groups = (groups & 0x007F_007F_007F_007F) | ((groups & 0x7F00_7F00_7F00_7F00) >> 1)
        groups = (groups & 0x0000_3FFF_0000_3FFF) | ((groups & 0x3FFF_0000_3FFF_0000) >> 2)
        return (groups & 0x0FFF_FFFF) | ((groups & 0x0FFF_FFFF_0000_0000) >> 4)
    }

    /// A varint read byte by byte (within eight bytes of the end, or longer than eight bytes); throws when the
    /// bytes end first or the value does not fit 64 bits.
    @inline(never)
    private mutating func longVarint() throws(BlockDecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            if shift == 63, b > 1 { throw BlockDecodingError("varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
            if shift > 63 { throw BlockDecodingError("varint longer than 10 bytes") }
        }
    }

    /// A varint that must not exceed `limit` (a count checked before anything is sized by it).
    mutating func count(atMost limit: Int, _ what: String) throws(BlockDecodingError) -> Int {
        let value = try varint()
        guard limit >= 0, value <= UInt64(limit) else { throw BlockDecodingError("\(what) \(value) exceeds \(limit)") }
        return Int(value)
    }

    /// The next `length` bytes as a reader of their own (a column), skipping them here.
    mutating func section(_ length: Int) throws(BlockDecodingError) -> BlockReader {
        guard length <= remaining else { throw BlockDecodingError("column longer than the block") }
        defer { offset += length }
        return BlockReader(UnsafeRawBufferPointer(rebasing: base[offset..<offset + length]))
    }

    mutating func skip(_ length: Int) throws(BlockDecodingError) {
        guard length <= remaining else { throw BlockDecodingError("truncated") }
        offset += length
    }
}

/// Zig-zag mapping of signed to unsigned integers, small magnitudes to small numbers.
@inline(__always) func zigZag(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value << 1) ^ (value >> 63))
}

/// The inverse of ``zigZag(_:)``.
@inline(__always) func unZigZag(_ value: UInt64) -> Int64 {
    Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
}

/// Runs `body` over the bytes of `array`, keeping the typed error (`Array.withUnsafeBytes` only rethrows).
func withBlockBytes<Result, Failure: Error>(
    _ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
) throws(Failure) -> Result {
    do {
        return try array.withUnsafeBytes { try body($0) }
    } catch let error as Failure {
        throw error
    } catch {
        preconditionFailure("unexpected error \(error)")
    }
}
