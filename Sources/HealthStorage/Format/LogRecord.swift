import Foundation
import HealthCodec
import HealthModel

/// One change the write-ahead log keeps: every record names its subject and quantity type (Protocol/STORAGE.md).
public enum LogChange: Hashable, Sendable {
    /// A batch as received (its own subject and type inside), written by client identity `writer` (0: unknown).
    case insert(SampleBatch, writer: UInt32 = 0)
    /// Deletion of one subject's samples of a type matching a filter (UUIDs included).
    case delete(subject: String, type: String, filter: SampleFilter)
    /// A new source priority order for one subject and type.
    case sourcePriority(subject: String, type: String, order: [SourceInfo])

    /// The record kind byte.
    public var kind: UInt8 {
        switch self {
        case .insert(_, let writer): writer == 0 ? 1 : 4
        case .delete: 2
        case .sourcePriority: 3
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
            w.writeFilter(filter, carryingWriter: true)
        case .sourcePriority(_, _, let order):
            w.writeSources(order)
        }
        return w.bytes
    }

    /// Decodes a payload of record kind `kind`; throws ``CodecError`` for anything malformed.
    public static func decode(kind: UInt8, payload: [UInt8]) throws -> LogChange {
        var r = ByteReader(payload)
        let subject = try r.readString(limit: SampleRules.maxSubjectLength)
        let type = try r.readString(limit: 256)
        let change: LogChange
        switch kind {
        case 1, 4:
            let writer = kind == 4 ? try readWriter(&r) : 0
            let limits = BatchLimits(maxRows: 1 << 24, maxSources: Int(UInt16.max) + 1)
            let batch = try SampleBatchCodec.decode(from: &r, limits: limits)
            guard batch.subject == subject, batch.typeIdentifier == type else {
                throw CodecError(
                    .malformedPayload,
                    "insert record names \(subject)/\(type) but holds \(batch.subject)/\(batch.typeIdentifier)")
            }
            change = .insert(batch, writer: writer)
        case 2:
            let filter = try r.readFilter(FieldCaps.storage, carryingWriter: true)
            change = .delete(subject: subject, type: type, filter: filter)
        case 3:
            change = .sourcePriority(subject: subject, type: type, order: try r.readSources(FieldCaps.storage))
        default:
            throw CodecError(.malformedPayload, "unknown record kind \(kind)")
        }
        try r.expectEnd("the \(kind) record")
        return change
    }

    /// The writer id of a kind 4 record: a varint that fits in 32 bits and is not 0.
    static func readWriter(_ r: inout ByteReader) throws -> UInt32 {
        let value = try r.readVarint()
        guard value != 0, let writer = UInt32(exactly: value) else {
            throw CodecError(.malformedPayload, "writer id \(value) is out of range")
        }
        return writer
    }
}
