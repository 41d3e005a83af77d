import HealthCodec

/// The magic-and-CRC frame every snapshot file of a table kept apart from the quantity shards shares (and a
/// cluster's partition snapshot head).
public enum SnapshotTrailer {
    /// `body` with its CRC-32 appended, little-endian.
    public static func sealed(_ body: [UInt8]) -> [UInt8] {
        var bytes = body
        withUnsafeBytes(of: Zlib.crc32(bytes).littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// A reader of `bytes` after the magic and before the CRC, once both are checked.
    public static func opened(_ bytes: [UInt8], magic: [UInt8], what: String) throws -> ByteReader {
        guard bytes.count >= magic.count + 12, Array(bytes[0..<magic.count]) == magic else {
            throw CodecError(.malformedPayload, "bad \(what) magic at offset 0")
        }
        let body = bytes.count - 4
        var trailer = ByteReader(bytes, offset: body)
        guard
            try trailer.readLE(UInt32.self)
                == bytes.withUnsafeBytes({ Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[..<body])) })
        else { throw CodecError(.malformedPayload, "\(what) checksum mismatch (stored at offset \(body))") }
        return ByteReader(bytes, offset: magic.count, endIndex: body)
    }
}
