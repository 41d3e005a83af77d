import HealthModel

/// Reads and writes one row of metadata: a count, then (key, tag, value) entries sorted by key.
enum MetadataCodec {
    /// Tag bytes of ``MetadataValue`` cases.
    enum Tag {
        static let string: UInt8 = 0
        static let number: UInt8 = 1
        static let date: UInt8 = 2
        static let quantity: UInt8 = 3
    }

    /// Smallest encoded entry: a one-byte key length, the tag, a one-byte value.
    static let minimumEntryBytes = 3

    static func write(_ row: [String: MetadataValue], into writer: inout ByteWriter) {
        writer.writeVarint(UInt64(row.count))
        guard !row.isEmpty else { return }
        for key in row.keys.sorted() {
            writer.writeString(key)
            switch row[key]! {
            case .string(let text):
                writer.write(Tag.string)
                writer.writeString(text)
            case .number(let number):
                writer.write(Tag.number)
                writer.writeDouble(number)
            case .date(let date):
                writer.write(Tag.date)
                writer.writeSignedVarint(date)
            case .quantity(let number, let unit):
                writer.write(Tag.quantity)
                writer.writeDouble(number)
                writer.writeString(unit)
            }
        }
    }

    static func read(_ cursor: inout ColumnCursor, limits: BatchLimits) throws(CodecError) -> [String: MetadataValue] {
        let count = try cursor.count(
            "metadata entry count", limit: limits.maxMetadataEntriesPerRow, minimumBytes: minimumEntryBytes)
        guard count > 0 else { return [:] }
        var row = [String: MetadataValue](minimumCapacity: count)
        for _ in 0..<count {
            let at = cursor.offset
            let key = try cursor.string("metadata key", limit: limits.maxStringBytes)
            let value: MetadataValue
            let tag = try cursor.byte("metadata tag")
            switch tag {
            case Tag.string: value = .string(try cursor.string("metadata string", limit: limits.maxStringBytes))
            case Tag.number: value = .number(try cursor.double("metadata number"))
            case Tag.date: value = .date(try cursor.signedVarint())
            case Tag.quantity:
                let number = try cursor.double("metadata quantity")
                value = .quantity(number, unit: try cursor.string("metadata unit", limit: limits.maxStringBytes))
            default:
                throw CodecError(.malformedPayload, "unknown metadata tag \(tag) at byte \(cursor.offset - 1)")
            }
            if row.updateValue(value, forKey: key) != nil {
                throw CodecError(.malformedPayload, "duplicate metadata key \"\(key)\" at byte \(at)")
            }
        }
        return row
    }
}
