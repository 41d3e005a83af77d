/// LEB128 varint decoding over raw memory: the one implementation behind ``ByteReader`` and the column decoders.
enum Varint {
    /// Largest number of bytes a 64-bit varint takes.
    static let maxLength = 10

    /// Decodes the varint at `base[offset]`, advancing `offset`; throws when it runs past `end` or overflows 64 bits.
    /// The one-byte case is inlined; longer ones take ``decodeLong(_:_:_:)``.
    @inline(__always)
    static func decode(_ base: UnsafePointer<UInt8>, _ offset: inout Int, _ end: Int) throws(CodecError) -> UInt64 {
        if offset < end {
            let byte = base[offset]
            if byte < 0x80 {
                offset += 1
                return UInt64(byte)
            }
        }
        return try decodeLong(base, &offset, end)
    }

    /// The multi-byte case of ``decode(_:_:_:)``, unrolled without bounds checks when ten bytes remain.
    @inline(never)
    static func decodeLong(_ base: UnsafePointer<UInt8>, _ offset: inout Int, _ end: Int) throws(CodecError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var position = offset
        let safe = end - position >= maxLength
        while true {
            guard safe || position < end else {
                throw CodecError(.malformedPayload, "truncated varint at byte \(offset)")
            }
            let byte = base[position]
            position += 1
            if shift == 63, byte > 1 {
                throw CodecError(.malformedPayload, "varint overflows 64 bits at byte \(offset)")
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                offset = position
                return result
            }
            shift += 7
        }
    }

    /// Writes `value` at `out` (which has room for ``maxLength`` bytes) and returns the bytes written.
    @inline(__always)
    static func encode(_ value: UInt64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var v = value
        var count = 0
        while v >= 0x80 {
            out[count] = UInt8(truncatingIfNeeded: v) | 0x80
            v >>= 7
            count += 1
        }
        out[count] = UInt8(truncatingIfNeeded: v)
        return count + 1
    }

    /// Number of bytes ``ByteWriter/writeVarint(_:)`` takes for `value`.
    @inline(__always)
    static func length(_ value: UInt64) -> Int {
        // 1 + floor((significant bits - 1) / 7), with 0 taking one byte.
        let bits = 64 - (value | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }
}
