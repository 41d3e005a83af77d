import HealthModel

/// The metadata of some rows of a series, keyed by the rows' change anchors: what a snapshot keeps (Protocol/
/// STORAGE.md, versions 6 to 8). `varint n`, then `n` entries of `varint anchor` (strictly increasing) and one metadata
/// row as Protocol/SAMPLE-BATCH.md's metadata column writes it (count, then sorted key, tag, value entries; never
/// empty). Rows without metadata are absent, so a series without any costs one byte.
public enum MetadataTable {
    /// Appends the table of `entries` (anchors strictly increasing, rows not empty) to `writer`.
    public static func encode(
        _ entries: some Collection<(anchor: UInt64, metadata: [String: MetadataValue])>, into writer: inout ByteWriter
    ) {
        writer.writeVarint(UInt64(entries.count))
        for (anchor, row) in entries {
            writer.writeVarint(anchor)
            MetadataCodec.write(row, into: &writer)
        }
    }

    /// The table in `bytes` (anchors increasing), which it must fill exactly. Counts are checked against `limits` and the bytes left
    /// before anything is reserved; anchors out of order, an empty row, a duplicate key or an unknown tag are
    /// ``ErrorCode/malformedPayload`` naming the byte offset.
    public static func decode(_ bytes: ArraySlice<UInt8>, limits: BatchLimits = .default) throws(CodecError)
        -> [(anchor: UInt64, metadata: [String: MetadataValue])]
    {
        let array = Array(bytes)
        let result: Result<[(anchor: UInt64, metadata: [String: MetadataValue])], CodecError> =
            array.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else {
                    return .failure(CodecError(.malformedPayload, "truncated metadata table count at byte 0"))
                }
                var cursor = ColumnCursor(base: base, offset: 0, end: buffer.count)
                return Result { () throws(CodecError) in try read(&cursor, limits: limits) }
            }
        return try result.get()
    }

    private static func read(_ cursor: inout ColumnCursor, limits: BatchLimits) throws(CodecError)
        -> [(anchor: UInt64, metadata: [String: MetadataValue])]
    {
        // An entry takes at least an anchor byte, a count byte and one smallest metadata entry.
        let count = try cursor.count(
            "metadata table count", limit: Int(UInt32.max), minimumBytes: 2 + MetadataCodec.minimumEntryBytes)
        var table: [(anchor: UInt64, metadata: [String: MetadataValue])] = []
        table.reserveCapacity(count)
        var previous: UInt64?
        for _ in 0..<count {
            let at = cursor.offset
            let anchor = try cursor.varint()
            if let previous, anchor <= previous {
                throw CodecError(.malformedPayload, "metadata table anchor \(anchor) at byte \(at) is not increasing")
            }
            previous = anchor
            let row = try MetadataCodec.read(&cursor, limits: limits)
            if row.isEmpty {
                throw CodecError(.malformedPayload, "metadata table row of anchor \(anchor) at byte \(at) is empty")
            }
            table.append((anchor, row))
        }
        if cursor.remaining > 0 {
            throw CodecError(.malformedPayload, "\(cursor.remaining) unexpected bytes after the metadata table")
        }
        return table
    }
}
