import Foundation

/// Appends little-endian integers, LEB128 varints, floats and length-prefixed strings to a byte array.
public struct ByteWriter: Sendable {
    /// Everything written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes before it reallocates.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Bytes written so far.
    public var count: Int { bytes.count }

    /// Writes one byte.
    public mutating func write(_ value: UInt8) { bytes.append(value) }

    /// Writes the bytes as they are, with no length prefix.
    public mutating func write(bytes other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }

    /// Writes a fixed-width integer, little-endian.
    public mutating func writeLE<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Writes an unsigned LEB128 varint: 7 bits a byte, low bits first, high bit set on all but the last.
    public mutating func writeVarint(_ value: UInt64) {
        if value < 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value))
            return
        }
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Writes a signed integer as a zig-zag varint (0, -1, 1, -2 … become 0, 1, 2, 3 …).
    public mutating func writeSignedVarint(_ value: Int64) {
        writeVarint(ByteWriter.zigzag(value))
    }

    /// Maps a signed integer to an unsigned one with small magnitudes first (0, −1, 1, −2 → 0, 1, 2, 3).
    public static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// Writes an IEEE 754 double, little-endian.
    public mutating func writeDouble(_ value: Double) { writeLE(value.bitPattern) }

    /// Writes a varint byte count followed by the UTF-8 bytes.
    public mutating func writeString(_ value: String) {
        writeVarint(UInt64(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    /// Writes a varint byte count followed by the bytes.
    public mutating func writeBlob(_ value: some Collection<UInt8>) {
        writeVarint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Writes the 16 bytes of a UUID in RFC 4122 order.
    public mutating func writeUUID(_ value: UUID) {
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
    }

    /// Writes `01` for true, `00` for false.
    public mutating func writeBool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// Lets `body` write up to `maxCount` bytes straight into the buffer and keeps the number it returns: the
    /// fast path for columns of varints.
    public mutating func append(maxCount: Int, _ body: (UnsafeMutablePointer<UInt8>) throws -> Int) rethrows {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: maxCount))
        var written = 0
        defer { bytes.removeLast(maxCount - written) }
        written = try bytes.withUnsafeMutableBufferPointer { buffer in
            try body(buffer.baseAddress! + start)
        }
        precondition((0...maxCount).contains(written), "append(maxCount:) body wrote \(written) of \(maxCount) bytes")
    }
}
