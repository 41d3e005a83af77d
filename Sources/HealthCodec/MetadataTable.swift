import HealthModel

/// The metadata of some rows of a series, keyed by the rows' change anchors: what a snapshot keeps (Protocol/
/// STORAGE.md, *The metadata table*). Rows without metadata are absent. Version 9 writes it dictionary-encoded
/// (``encode(distinct:entries:into:)``): each distinct metadata row once, then per row its anchor's distance from
/// the previous one and the index of its metadata row. Versions 6 to 8 wrote a metadata row per anchor
/// (``encode(_:into:)``): `varint n`, then `n` entries of `varint anchor` (strictly increasing) and one metadata row
/// as Protocol/SAMPLE-BATCH.md's metadata column writes it (count, then sorted key, tag, value entries; never empty).
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
        try ColumnCursor.reading(bytes, "metadata table count") { (cursor) throws(CodecError) in
            try read(&cursor, limits: limits)
        }
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

    /// Appends the dictionary-encoded table (version 9) to `writer`: `varint d`, the `d` distinct metadata rows
    /// (none empty), then `varint n` and per row with metadata `varint` its anchor less the previous row's (the
    /// first: its anchor) and `varint` its row's index in `distinct`. `entries` are in increasing anchor order.
    public static func encode(
        distinct: [[String: MetadataValue]], entries: some Collection<(anchor: UInt64, index: Int)>,
        into writer: inout ByteWriter
    ) {
        writer.writeVarint(UInt64(distinct.count))
        for row in distinct { MetadataCodec.write(row, into: &writer) }
        writer.writeVarint(UInt64(entries.count))
        var previous: UInt64 = 0
        for (anchor, index) in entries {
            writer.writeVarint(anchor - previous)
            writer.writeVarint(UInt64(index))
            previous = anchor
        }
    }

    /// The dictionary-encoded table in `bytes` (version 9), which it must fill exactly: the distinct rows and,
    /// anchors increasing, each row's anchor and index into them. An empty row, an anchor not above the previous
    /// one (or past 2^64), an index past the distinct rows or bytes left over are ``ErrorCode/malformedPayload``.
    public static func decodeDistinct(_ bytes: ArraySlice<UInt8>, limits: BatchLimits = .default) throws(CodecError)
        -> (distinct: [[String: MetadataValue]], anchors: [UInt64], indices: [UInt32])
    {
        try ColumnCursor.reading(bytes, "metadata table distinct rows") { (cursor) throws(CodecError) in
            try readDistinct(&cursor, limits: limits)
        }
    }

    private static func readDistinct(_ cursor: inout ColumnCursor, limits: BatchLimits) throws(CodecError)
        -> ([[String: MetadataValue]], [UInt64], [UInt32])
    {
        let rowCount = try cursor.count(
            "metadata table distinct rows", limit: Int(UInt32.max), minimumBytes: 1 + MetadataCodec.minimumEntryBytes)
        var distinct: [[String: MetadataValue]] = []
        distinct.reserveCapacity(rowCount)
        for index in 0..<rowCount {
            let at = cursor.offset
            let row = try MetadataCodec.read(&cursor, limits: limits)
            if row.isEmpty {
                throw CodecError(.malformedPayload, "metadata table distinct row \(index) at byte \(at) is empty")
            }
            distinct.append(row)
        }
        let count = try cursor.count("metadata table count", limit: Int(UInt32.max), minimumBytes: 2)
        var anchors: [UInt64] = []
        var indices: [UInt32] = []
        anchors.reserveCapacity(count)
        indices.reserveCapacity(count)
        var previous: UInt64 = 0
        for entry in 0..<count {
            let at = cursor.offset
            let step = try cursor.varint()
            let index = try cursor.varint()
            guard step > 0 || entry == 0, step <= UInt64.max - previous else {
                throw CodecError(.malformedPayload, "metadata table anchor at byte \(at) is not increasing")
            }
            guard index < UInt64(distinct.count) else {
                throw CodecError(
                    .malformedPayload, "metadata table index \(index) at byte \(at) is past its \(distinct.count) rows")
            }
            previous += step
            anchors.append(previous)
            indices.append(UInt32(index))
        }
        if cursor.remaining > 0 {
            throw CodecError(.malformedPayload, "\(cursor.remaining) unexpected bytes after the metadata table")
        }
        return (distinct, anchors, indices)
    }
}
