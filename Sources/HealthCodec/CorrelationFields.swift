import Foundation
import HealthModel

// The byte layout of one correlation (Protocol/PROTOCOL.md, "Correlation"), shared by the protocol, the log and
// the correlation snapshot, and the list helpers the object messages share: every length is capped before
// anything is allocated.

extension ByteWriter {
    /// Appends `correlation` (Protocol/PROTOCOL.md, "Correlation").
    public mutating func writeCorrelation(_ correlation: Correlation) {
        writeUUID(correlation.uuid)
        write(correlation.type.code)
        writeSignedVarint(correlation.start)
        writeSignedVarint(correlation.end)
        writeSource(correlation.source)
        writeMetadataRow(correlation.metadata)
        writeVarint(UInt64(correlation.members.count))
        for member in correlation.members {
            writeUUID(member.uuid)
            writeString(member.type.identifier)
        }
    }

    /// Appends `varint n`, then each of `items` as `body` writes it.
    public mutating func writeList<Item>(_ items: some Collection<Item>, _ body: (inout ByteWriter, Item) -> Void) {
        writeVarint(UInt64(items.count))
        for item in items { body(&self, item) }
    }
}

extension ByteReader {
    /// The fewest bytes a correlation takes (no members, empty strings and metadata: the decoder reads such a
    /// one, and validation refuses it later): what a list of correlations is capped with.
    public static let minCorrelationBytes = 26

    /// Reads a correlation written by ``ByteWriter/writeCorrelation(_:)``; the member list is capped by `limits`
    /// and ``Correlation/Limits``; an unknown correlation or member type is ``ErrorCode/malformedPayload``.
    public mutating func readCorrelation(_ limits: some FieldLimits) throws -> Correlation {
        let uuid = try readUUID()
        let code = try readByte()
        guard let type = CorrelationType(code: code) else {
            throw CodecError(.malformedPayload, "unknown correlation type \(code) before byte \(offset)")
        }
        let start = try readSignedVarint()
        let end = try readSignedVarint()
        let source = try readSource(limits)
        let metadata = try readMetadataRow(limits)
        // A member takes at least 17 bytes: its UUID and a type's length.
        let members = try readList(
            "correlation member", limits: limits, minBytes: 17, max: Correlation.Limits.maxMembers
        ) { r in
            let member = try r.readUUID()
            let name = try r.readString(limits)
            guard let memberType = try? QuantityType.named(name), !memberType.isCategory else {
                throw CodecError(
                    .malformedPayload, "unknown correlation member type \"\(name)\" before byte \(r.offset)")
            }
            return CorrelationMember(uuid: member, type: memberType)
        }
        return Correlation(
            uuid: uuid, type: type, start: start, end: end, source: source, metadata: metadata, members: members)
    }

    /// Reads `varint n` (capped by `limits`, by the bytes left at `minBytes` an entry, and by `max`), then n
    /// entries with `body`.
    public mutating func readList<Item>(
        _ what: String, limits: some FieldLimits, minBytes: Int, max: Int, _ body: (inout ByteReader) throws -> Item
    ) throws -> [Item] {
        let count = try readListCount(what, limits: limits, minBytes: minBytes)
        guard count <= max else { throw CodecError(.malformedPayload, "\(count) \(what) entries; at most \(max)") }
        var items: [Item] = []
        items.reserveCapacity(count)
        for _ in 0..<count { items.append(try body(&self)) }
        return items
    }
}
