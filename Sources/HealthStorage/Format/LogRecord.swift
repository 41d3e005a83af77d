import Foundation
import HealthCodec
import HealthModel

/// The kind byte of a log record (Protocol/STORAGE.md, "Log segment").
public enum LogRecordKind: UInt8, Sendable, CaseIterable {
    /// A batch written by no known identity (writer 0; what hkd wrote before identities existed).
    case insert = 1
    /// A deletion by filter.
    case delete = 2
    /// A source priority order.
    case sourcePriority = 3
    /// A batch written by a client identity: its writer id, then the batch.
    case insertByIdentity = 4
}

/// One change the write-ahead log keeps: every record names its subject and quantity type (Protocol/STORAGE.md).
public enum LogChange: Hashable, Sendable {
    /// A batch as received (its own subject and type inside), written by client identity `writer` (0: unknown).
    case insert(SampleBatch, writer: UInt32 = 0)
    /// Deletion of one subject's samples of a type matching a filter (UUIDs included).
    case delete(subject: String, type: String, filter: SampleFilter)
    /// A new source priority order for one subject and type.
    case sourcePriority(subject: String, type: String, order: [SourceInfo])

    /// The record kind.
    public var kind: LogRecordKind {
        switch self {
        case .insert(_, let writer): writer == 0 ? .insert : .insertByIdentity
        case .delete: .delete
        case .sourcePriority: .sourcePriority
        }
    }

    /// The subject the change is about.
    public var subject: String {
        switch self {
        case .insert(let batch, _): batch.subject
        case .delete(let subject, _, _), .sourcePriority(let subject, _, _): subject
        }
    }

    /// The quantity type identifier, as sent.
    public var type: String {
        switch self {
        case .insert(let batch, _): batch.typeIdentifier
        case .delete(_, let type, _), .sourcePriority(_, let type, _): type
        }
    }

    /// The record payload: subject, type, then the kind's body.
    public func encodePayload() throws -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.writeString(subject)
        w.writeString(type)
        switch self {
        case .insert(let batch, let writer):
            if writer != 0 { w.writeVarint(UInt64(writer)) }
            try SampleBatchCodec.encode(batch, into: &w)
        case .delete(_, _, let filter):
            LogChange.write(filter, into: &w)
        case .sourcePriority(_, _, let order):
            w.writeVarint(UInt64(order.count))
            for source in order { LogChange.write(source, into: &w) }
        }
        return w.bytes
    }

    /// Decodes a payload of record kind `kind`; throws ``CodecError`` for anything malformed.
    public static func decode(kind: UInt8, payload: [UInt8]) throws -> LogChange {
        var r = ByteReader(payload)
        let subject = try r.readString(limit: SampleRules.maxSubjectLength)
        let type = try r.readString(limit: 256)
        let change: LogChange
        guard let recordKind = LogRecordKind(rawValue: kind) else {
            throw CodecError(.malformedPayload, "unknown record kind \(kind)")
        }
        switch recordKind {
        case .insert, .insertByIdentity:
            let writer = recordKind == .insertByIdentity ? try readWriter(&r) : 0
            let limits = BatchLimits(maxRows: 1 << 24, maxSources: Int(UInt16.max) + 1)
            let batch = try SampleBatchCodec.decode(from: &r, limits: limits)
            guard batch.subject == subject, batch.typeIdentifier == type else {
                throw CodecError(
                    .malformedPayload,
                    "insert record names \(subject)/\(type) but holds \(batch.subject)/\(batch.typeIdentifier)")
            }
            change = .insert(batch, writer: writer)
        case .delete:
            change = .delete(subject: subject, type: type, filter: try readFilter(&r))
        case .sourcePriority:
            let count = try r.readCount("source count", limit: r.remaining / 4)
            var order: [SourceInfo] = []
            for _ in 0..<count { order.append(try readSource(&r)) }
            change = .sourcePriority(subject: subject, type: type, order: order)
        }
        try r.expectEnd("the \(recordKind) record")
        return change
    }

    /// A writer id of a kind 4 record or a filter: a varint that fits in 32 bits and is not 0.
    static func readWriter(_ r: inout ByteReader) throws -> UInt32 {
        let value = try r.readVarint()
        guard value != 0, let writer = UInt32(exactly: value) else {
            throw CodecError(.malformedPayload, "writer id \(value) is out of range")
        }
        return writer
    }

    static func write(_ source: SourceInfo, into w: inout ByteWriter) {
        w.writeString(source.name)
        w.writeString(source.bundleIdentifier)
        w.writeString(source.version)
        w.writeString(source.device)
    }

    static func readSource(_ r: inout ByteReader) throws -> SourceInfo {
        SourceInfo(
            name: try r.readString(), bundleIdentifier: try r.readString(), version: try r.readString(),
            device: try r.readString())
    }

    /// Filter: flags byte (1 start, 2 end, 4 strict start, 8 strict end, 16 sources, 32 UUIDs, 64 writer), the
    /// present bounds as zig-zag varints, the sources (sorted) and UUIDs (sorted) as counted lists, the writer.
    static func write(_ filter: SampleFilter, into w: inout ByteWriter) {
        let d = filter.date
        var flags: UInt8 = 0
        if d.start != nil { flags |= 1 }
        if d.end != nil { flags |= 2 }
        if d.strictStartDate { flags |= 4 }
        if d.strictEndDate { flags |= 8 }
        if filter.sources != nil { flags |= 16 }
        if filter.uuids != nil { flags |= 32 }
        if filter.writer != nil { flags |= 64 }
        w.write(flags)
        if let start = d.start { w.writeSignedVarint(start) }
        if let end = d.end { w.writeSignedVarint(end) }
        if let sources = filter.sources {
            w.writeVarint(UInt64(sources.count))
            for source in sources.sorted() { w.writeString(source) }
        }
        if let uuids = filter.uuids {
            w.writeVarint(UInt64(uuids.count))
            for uuid in uuids.sorted(by: { $0.uuidString < $1.uuidString }) { w.writeUUID(uuid) }
        }
        if let writer = filter.writer { w.writeVarint(UInt64(writer)) }
    }

    static func readFilter(_ r: inout ByteReader) throws -> SampleFilter {
        let flags = try r.readByte()
        guard flags & ~127 == 0 else { throw CodecError(.malformedPayload, "unknown filter flags \(flags)") }
        var date = DatePredicate(strictStartDate: flags & 4 != 0, strictEndDate: flags & 8 != 0)
        if flags & 1 != 0 { date.start = try r.readSignedVarint() }
        if flags & 2 != 0 { date.end = try r.readSignedVarint() }
        var filter = SampleFilter(date: date)
        if flags & 16 != 0 {
            let count = try r.readCount("filter source count", limit: r.remaining)
            var sources = Set<String>()
            for _ in 0..<count { sources.insert(try r.readString()) }
            filter.sources = sources
        }
        if flags & 32 != 0 {
            let count = try r.readCount("filter UUID count", limit: r.remaining / 16)
            var uuids = Set<UUID>()
            for _ in 0..<count { uuids.insert(try r.readUUID()) }
            filter.uuids = uuids
        }
        if flags & 64 != 0 {
            let value = try r.readVarint()
            guard let writer = UInt32(exactly: value) else {
                throw CodecError(.malformedPayload, "filter writer id \(value) is out of range")
            }
            filter.writer = writer
        }
        return filter
    }
}
