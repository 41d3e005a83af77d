import HealthCodec

/// The durable mark (`wal/DURABLE`, Protocol/STORAGE.md): the highest log sequence known to have been fsynced,
/// so that start-up can tell a tail that was never acknowledged from acknowledged records that went missing.
/// `magic "HKDUR001" (8) | sequence u64 | crc u32` — 20 bytes, written in place. Pure, thread-safe.
public enum DurableMark {
    /// First 8 bytes of the file.
    public static let magic: [UInt8] = Array("HKDUR001".utf8)
    /// The file's size.
    public static let size = 20

    /// The file's bytes for `sequence`.
    public static func encode(_ sequence: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: size)
        w.write(bytes: magic)
        w.writeLE(sequence)
        var bytes = w.bytes
        withUnsafeBytes(of: Zlib.crc32(bytes).littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The sequence a mark holds; throws ``CodecError`` for anything but a well-formed 20-byte mark.
    public static func decode(_ bytes: [UInt8]) throws -> UInt64 {
        guard bytes.count == size, Array(bytes[0..<8]) == magic else {
            throw CodecError(.malformedPayload, "bad durable mark magic or size (\(bytes.count) bytes)")
        }
        var r = ByteReader(bytes, offset: 8)
        let sequence = try r.readLE(UInt64.self)
        guard try r.readLE(UInt32.self) == Zlib.crc32(Array(bytes[0..<16])) else {
            throw CodecError(.malformedPayload, "durable mark checksum mismatch (offset 16)")
        }
        return sequence
    }
}
