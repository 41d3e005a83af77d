import Foundation
import HealthCodec
import HealthModel

// Fields the workout and correlation queries and results share (Protocol/PROTOCOL.md, "workoutQuery",
// "correlationQuery"): the optional start range and UUIDs behind one flags byte, and the deleted-UUID list.

extension ByteWriter {
    /// Appends `u8 flags` (bit 0 start, bit 1 end, bit 2 UUIDs), then the fields present.
    mutating func writeObjectRange(start: Timestamp?, end: Timestamp?, uuids: Set<UUID>?) {
        var flags: UInt8 = 0
        if start != nil { flags |= 1 }
        if end != nil { flags |= 2 }
        if uuids != nil { flags |= 4 }
        write(flags)
        if let start { writeSignedVarint(start) }
        if let end { writeSignedVarint(end) }
        if let uuids { writeUUIDs(uuids.sorted { $0.uuidString < $1.uuidString }) }
    }

    /// Appends `varint n`, then (varint anchor, 16 bytes UUID) × n.
    mutating func writeDeletions(_ deleted: [(anchor: UInt64, uuid: UUID)]) {
        writeList(deleted) {
            $0.writeVarint($1.anchor)
            $0.writeUUID($1.uuid)
        }
    }
}

extension ByteReader {
    /// Reads what ``ByteWriter/writeObjectRange(start:end:uuids:)`` wrote; unknown flags are malformed.
    mutating func readObjectRange(_ limits: MessageLimits) throws -> (
        start: Timestamp?, end: Timestamp?, uuids: Set<UUID>?
    ) {
        let flags = try readByte()
        guard flags & ~7 == 0 else {
            throw CodecError(.malformedPayload, "unknown filter flags \(flags) before byte \(offset)")
        }
        let start = flags & 1 != 0 ? try readSignedVarint() : nil
        let end = flags & 2 != 0 ? try readSignedVarint() : nil
        let uuids = flags & 4 != 0 ? Set(try readUUIDs(limits)) : nil
        return (start, end, uuids)
    }

    /// Reads what ``ByteWriter/writeDeletions(_:)`` wrote.
    mutating func readDeletions(_ what: String, limits: MessageLimits) throws -> [(anchor: UInt64, uuid: UUID)] {
        try readList(what, limits: limits, minBytes: 17, max: limits.maxListEntries) {
            (try $0.readVarint(), try $0.readUUID())
        }
    }
}
