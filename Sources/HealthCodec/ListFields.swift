import Foundation

// Counted lists of strings and UUIDs: a varint count, then the entries.

extension ByteWriter {
    /// A varint count, then each string.
    public mutating func writeStrings(_ values: [String]) {
        writeVarint(UInt64(values.count))
        for value in values { writeString(value) }
    }

    /// A varint count, then each UUID's 16 bytes.
    public mutating func writeUUIDs(_ uuids: [UUID]) {
        writeVarint(UInt64(uuids.count))
        for uuid in uuids { writeUUID(uuid) }
    }
}

extension ByteReader {
    /// Reads what ``ByteWriter/writeStrings(_:)`` wrote; `what` names the list in errors.
    public mutating func readStrings(_ what: String, limits: some FieldLimits) throws -> [String] {
        let count = try readListCount(what, limits: limits)
        var values: [String] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try readString(limits)) }
        return values
    }

    /// Reads what ``ByteWriter/writeUUIDs(_:)`` wrote.
    public mutating func readUUIDs(_ limits: some FieldLimits) throws -> [UUID] {
        let count = try readListCount("UUID", limits: limits, minBytes: 16)
        var uuids: [UUID] = []
        uuids.reserveCapacity(count)
        for _ in 0..<count { uuids.append(try readUUID()) }
        return uuids
    }
}
