import Foundation

/// Reads what ``ByteWriter`` writes from a borrowed byte slice; every read checks the remaining length first and
/// throws ``CodecError`` instead of trapping.
public struct ByteReader {
    /// The array read from (shared, not copied).
    public let bytes: [UInt8]
    /// Position of the next byte to read (HealthCodec's column decoders advance it past what they consume).
    public internal(set) var offset: Int
    /// Position just past the last byte the reader may read.
    public let endIndex: Int

    /// Reads `bytes[offset..<endIndex]`; both bounds are clamped into the array, so a bad range reads as truncated.
    public init(_ bytes: [UInt8], offset: Int = 0, endIndex: Int? = nil) {
        self.bytes = bytes
        let end = min(max(endIndex ?? bytes.count, 0), bytes.count)
        self.endIndex = end
        self.offset = min(max(offset, 0), end)
    }

    /// Bytes left to read.
    public var remaining: Int { endIndex - offset }
    /// Whether every byte up to ``endIndex`` has been read.
    public var isAtEnd: Bool { offset >= endIndex }

    private func truncated(_ what: String) -> CodecError {
        CodecError(.malformedPayload, "truncated \(what) at byte \(offset)")
    }

    /// Reads one byte.
    public mutating func readByte() throws -> UInt8 {
        guard offset < endIndex else { throw truncated("byte") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads `00` or `01`; any other byte throws.
    public mutating func readBool() throws -> Bool {
        let byte = try readByte()
        guard byte <= 1 else { throw CodecError(.malformedPayload, "boolean byte \(byte) at byte \(offset - 1)") }
        return byte == 1
    }

    /// Reads a fixed-width little-endian integer.
    public mutating func readLE<T: FixedWidthInteger>(_ type: T.Type = T.self) throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw truncated("\(size)-byte integer") }
        let raw = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
        offset += size
        return T(littleEndian: raw)
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes.
    public mutating func readVarint() throws -> UInt64 {
        let end = endIndex
        return try bytes.withUnsafeBufferPointer { buffer throws(CodecError) -> UInt64 in
            guard let base = buffer.baseAddress else {
                throw CodecError(.malformedPayload, "truncated varint at byte \(offset)")
            }
            return try Varint.decode(base, &offset, end)
        }
    }

    /// Reads a zig-zag varint (see ``ByteWriter/writeSignedVarint(_:)``).
    public mutating func readSignedVarint() throws -> Int64 {
        ByteReader.unzigzag(try readVarint())
    }

    /// Inverts ``ByteWriter/zigzag(_:)``.
    public static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }

    /// Reads a varint that must not exceed `limit`, naming `what` in the error (built only for the error: list
    /// counts are read once per list, a collection reply holds one per bucket).
    public mutating func readCount(_ what: @autoclosure () -> String, limit: Int) throws -> Int {
        let value = try readVarint()
        guard value <= UInt64(limit) else {
            throw CodecError(.malformedPayload, "\(what()) \(value) exceeds the limit \(limit)")
        }
        return Int(value)
    }

    /// Reads an IEEE 754 double, little-endian, keeping its exact bits.
    public mutating func readDouble() throws -> Double { Double(bitPattern: try readLE(UInt64.self)) }

    /// Reads `count` raw bytes.
    public mutating func readBytes(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw truncated("\(count)-byte field") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Reads a length-prefixed UTF-8 string of at most `limit` bytes.
    public mutating func readString(limit: Int = 65_536) throws -> String {
        let length = try readCount("string length", limit: limit)
        let slice = try readBytes(length)
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw CodecError(.malformedPayload, "invalid UTF-8 in string ending at byte \(offset)")
        }
        return string
    }

    /// Reads a length-prefixed blob of at most `limit` bytes.
    public mutating func readBlob(limit: Int) throws -> ArraySlice<UInt8> {
        try readBytes(try readCount("blob length", limit: limit))
    }

    /// Reads 16 bytes as a UUID in RFC 4122 order.
    public mutating func readUUID() throws -> UUID {
        let b = try readBytes(16)
        let i = b.startIndex
        return UUID(
            uuid: (
                b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7],
                b[i + 8], b[i + 9], b[i + 10], b[i + 11], b[i + 12], b[i + 13], b[i + 14], b[i + 15]
            ))
    }

    /// Throws unless every byte has been read.
    public func expectEnd(_ what: String) throws {
        guard isAtEnd else { throw CodecError(.malformedPayload, "\(remaining) unexpected bytes after \(what)") }
    }
}
