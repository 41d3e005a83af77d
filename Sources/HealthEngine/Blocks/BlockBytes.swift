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

    /// A LEB128 varint; one- and two-byte varints (the common cases in packed columns' exception lists: gaps,
    /// step counts) take the inlined fast path.
    @inline(__always)
    mutating func varint() throws(BlockDecodingError) -> UInt64 {
        if offset + 1 < base.count {
            let first = base[offset]
            if first < 0x80 {
                offset += 1
                return UInt64(first)
            }
            let second = base[offset + 1]
            if second < 0x80 {
                offset += 2
                return UInt64(first & 0x7F) | UInt64(second) << 7
            }
        } else if offset < base.count, base[offset] < 0x80 {
            offset += 1
            return UInt64(base[offset - 1])
        }
        return try longVarint()
    }

    /// ``varint()`` byte by byte, with its checks.
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
