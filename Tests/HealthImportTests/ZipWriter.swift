import HealthCodec

/// A minimal zip writer for building test archives: stored or deflated entries, optionally in zip64 form, with
/// knobs to damage them.
struct ZipWriter {
    /// One file to put in the archive.
    struct Entry {
        var name: String
        var data: [UInt8]
        /// 0 stored, 8 deflated.
        var method: UInt16 = 8
        /// Replaces the compressed bytes (to corrupt them).
        var rawOverride: [UInt8]? = nil
        /// Replaces the CRC-32 written.
        var crcOverride: UInt32? = nil
        /// Replaces the uncompressed size written.
        var sizeOverride: Int? = nil
    }

    /// The archive holding `entries`; `zip64` writes zip64 extra fields and end records even for small sizes.
    static func archive(_ entries: [Entry], zip64: Bool = false, comment: String = "") -> [UInt8] {
        var out = ByteWriter()
        var central = ByteWriter()
        for entry in entries {
            let payload = entry.rawOverride ?? (entry.method == 8 ? Zlib.deflate(entry.data, format: .raw) : entry.data)
            let crc = entry.crcOverride ?? Zlib.crc32(entry.data)
            let size = UInt64(entry.sizeOverride ?? entry.data.count)
            let offset = UInt64(out.count)
            let name = Array(entry.name.utf8)
            // Local header.
            out.writeLE(UInt32(0x0403_4b50))
            out.writeLE(UInt16(zip64 ? 45 : 20))
            out.writeLE(UInt16(0))
            out.writeLE(entry.method)
            out.writeLE(UInt32(0))
            out.writeLE(crc)
            out.writeLE(zip64 ? UInt32.max : UInt32(payload.count))
            out.writeLE(zip64 ? UInt32.max : UInt32(size))
            out.writeLE(UInt16(name.count))
            out.writeLE(UInt16(zip64 ? 20 : 0))
            out.write(bytes: name)
            if zip64 {
                out.writeLE(UInt16(1))
                out.writeLE(UInt16(16))
                out.writeLE(size)
                out.writeLE(UInt64(payload.count))
            }
            out.write(bytes: payload)
            // Central directory entry.
            central.writeLE(UInt32(0x0201_4b50))
            central.writeLE(UInt16(zip64 ? 45 : 20))
            central.writeLE(UInt16(zip64 ? 45 : 20))
            central.writeLE(UInt16(0))
            central.writeLE(entry.method)
            central.writeLE(UInt32(0))
            central.writeLE(crc)
            central.writeLE(zip64 ? UInt32.max : UInt32(payload.count))
            central.writeLE(zip64 ? UInt32.max : UInt32(size))
            central.writeLE(UInt16(name.count))
            central.writeLE(UInt16(zip64 ? 28 : 0))
            central.writeLE(UInt16(0))
            central.writeLE(UInt16(0))
            central.writeLE(UInt16(0))
            central.writeLE(UInt32(0))
            central.writeLE(zip64 ? UInt32.max : UInt32(offset))
            central.write(bytes: name)
            if zip64 {
                central.writeLE(UInt16(1))
                central.writeLE(UInt16(24))
                central.writeLE(size)
                central.writeLE(UInt64(payload.count))
                central.writeLE(offset)
            }
        }
        let directoryOffset = UInt64(out.count)
        out.write(bytes: central.bytes)
        if zip64 {
            let recordOffset = UInt64(out.count)
            out.writeLE(UInt32(0x0606_4b50))
            out.writeLE(UInt64(44))
            out.writeLE(UInt16(45))
            out.writeLE(UInt16(45))
            out.writeLE(UInt32(0))
            out.writeLE(UInt32(0))
            out.writeLE(UInt64(entries.count))
            out.writeLE(UInt64(entries.count))
            out.writeLE(UInt64(central.count))
            out.writeLE(directoryOffset)
            out.writeLE(UInt32(0x0706_4b50))
            out.writeLE(UInt32(0))
            out.writeLE(recordOffset)
            out.writeLE(UInt32(1))
        }
        let commentBytes = Array(comment.utf8)
        out.writeLE(UInt32(0x0605_4b50))
        out.writeLE(UInt16(0))
        out.writeLE(UInt16(0))
        out.writeLE(zip64 ? UInt16.max : UInt16(entries.count))
        out.writeLE(zip64 ? UInt16.max : UInt16(entries.count))
        out.writeLE(zip64 ? UInt32.max : UInt32(central.count))
        out.writeLE(zip64 ? UInt32.max : UInt32(directoryOffset))
        out.writeLE(UInt16(commentBytes.count))
        out.write(bytes: commentBytes)
        return out.bytes
    }
}
