import Foundation
import HealthCodec
import HealthModel

/// A columnar batch of samples to store. Answered by ``InsertAck`` once the batch is applied (and, with
/// durability, logged as the server's fsync policy promises).
public struct Insert: WireMessage {
    public static let kind = MessageKind.insert
    public var batch: SampleBatch
    /// The batch's bytes exactly as they arrived (SAMPLE-BATCH.md, uncompressed), set when the message was
    /// decoded: the server logs them as they are instead of encoding the batch again. Not part of equality.
    public var receivedBatchBytes: ArraySlice<UInt8>?

    public init(batch: SampleBatch) { self.batch = batch }
    public func encode(into w: inout ByteWriter) { w.writeBatch(batch) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        (batch, receivedBatchBytes) = try r.readBatchKeepingBytes(limits)
    }

    public static func == (a: Insert, b: Insert) -> Bool { a.batch == b.batch }
    public func hash(into hasher: inout Hasher) { hasher.combine(batch) }
}

extension Insert: CustomDebugStringConvertible {
    /// The batch only: the received bytes are a transport detail.
    public var debugDescription: String { "HealthWire.Insert(batch: \(String(reflecting: batch)))" }
}

/// The acknowledgement of an ``Insert``.
public struct InsertAck: WireMessage {
    public static let kind = MessageKind.insertAck
    public var batchID: UInt64
    /// Rows that became new samples.
    public var inserted: UInt64
    /// Rows that were already stored with the same content (a retried batch) and changed nothing.
    public var duplicates: UInt64

    public init(batchID: UInt64, inserted: UInt64, duplicates: UInt64 = 0) {
        self.batchID = batchID
        self.inserted = inserted
        self.duplicates = duplicates
    }

    public func encode(into w: inout ByteWriter) {
        w.writeLE(batchID)
        w.writeVarint(inserted)
        w.writeVarint(duplicates)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        batchID = try r.readLE(UInt64.self)
        inserted = try r.readVarint()
        duplicates = try r.readVarint()
    }
}

/// Which samples a ``Delete`` removes.
public enum DeleteSelection: Hashable, Sendable {
    /// These samples, wherever they are in the type.
    case uuids([UUID])
    /// Every sample of the type matching the filter (time range, sources).
    case filter(SampleFilter)
}

/// Deletes samples of one type for one subject, by UUID or by predicate. Answered by ``DeleteAck``.
public struct Delete: WireMessage {
    public static let kind = MessageKind.delete
    public var subject: String
    public var type: String
    public var selection: DeleteSelection

    public init(subject: String, type: String, selection: DeleteSelection) {
        self.subject = subject
        self.type = type
        self.selection = selection
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeString(type)
        switch selection {
        case .uuids(let uuids):
            w.write(0)
            w.writeUUIDs(uuids)
        case .filter(let filter):
            w.write(1)
            w.writeFilter(filter, carryingWriter: false)
        }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        type = try r.readString(limits)
        switch try r.readByte() {
        case 0: selection = .uuids(try r.readUUIDs(limits))
        case 1: selection = .filter(try r.readFilter(limits, carryingWriter: false))
        case let other: throw CodecError(.malformedPayload, "unknown delete selection \(other)")
        }
    }
}

/// The acknowledgement of a ``Delete``.
public struct DeleteAck: WireMessage {
    public static let kind = MessageKind.deleteAck
    public var deleted: UInt64
    public init(deleted: UInt64) { self.deleted = deleted }
    public func encode(into w: inout ByteWriter) { w.writeVarint(deleted) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws { deleted = try r.readVarint() }
}
