import Foundation
import HealthCodec
import HealthModel

/// Adds correlations for one subject (HEALTHKIT.md §13); all or none. Their member samples are sent as ordinary
/// samples (`insert`); a correlation only names them. Answered by ``CorrelationInsertAck``.
public struct CorrelationInsert: WireMessage {
    public static let kind = MessageKind.correlationInsert
    /// At most this many correlations in one request.
    public static let maxCorrelations = 100_000
    public var subject: String
    public var correlations: [Correlation]

    public init(subject: String, correlations: [Correlation]) {
        self.subject = subject
        self.correlations = correlations
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeList(correlations) { $0.writeCorrelation($1) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        correlations = try r.readList(
            "correlation", limits: limits, minBytes: ByteReader.minCorrelationBytes, max: Self.maxCorrelations
        ) { try $0.readCorrelation(limits) }
    }
}

/// How many correlations of a ``CorrelationInsert`` were new and how many were already stored.
public struct CorrelationInsertAck: WireMessage {
    public static let kind = MessageKind.correlationInsertAck
    public var inserted: UInt64
    public var duplicates: UInt64
    public init(inserted: UInt64, duplicates: UInt64) { (self.inserted, self.duplicates) = (inserted, duplicates) }
    public func encode(into w: inout ByteWriter) {
        w.writeVarint(inserted)
        w.writeVarint(duplicates)
    }
    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        (inserted, duplicates) = (try r.readVarint(), try r.readVarint())
    }
}

/// Asks for one subject's correlations matching a filter: types, a start range, UUIDs, changes after an anchor.
/// Answered by ``CorrelationResult``.
public struct CorrelationQuery: WireMessage {
    public static let kind = MessageKind.correlationQuery
    public var subject: String
    public var filter: CorrelationFilter
    /// At most this many correlations (0: the server's cap, ``CorrelationInsert/maxCorrelations``).
    public var limit: UInt64

    public init(subject: String, filter: CorrelationFilter = CorrelationFilter(), limit: UInt64 = 0) {
        self.subject = subject
        self.filter = filter
        self.limit = limit
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeList(filter.types.map(\.code).sorted()) { $0.write($1) }
        w.writeObjectRange(start: filter.start, end: filter.end, uuids: filter.uuids)
        w.writeVarint(filter.afterAnchor)
        w.writeVarint(limit)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        let types = try r.readList("correlation type", limits: limits, minBytes: 1, max: 2) { r in
            let code = try r.readByte()
            guard let type = CorrelationType(code: code) else {
                throw CodecError(.malformedPayload, "unknown correlation type \(code) before byte \(r.offset)")
            }
            return type
        }
        let range = try r.readObjectRange(limits)
        filter = CorrelationFilter(
            types: Set(types), start: range.start, end: range.end, uuids: range.uuids, afterAnchor: try r.readVarint())
        limit = try r.readVarint()
    }
}

/// The correlations a ``CorrelationQuery`` found, by start, each with its change anchor; the UUIDs (with anchors)
/// deleted after the query's anchor; and the newest anchor handed out (the next query's `afterAnchor`).
public struct CorrelationResult: WireMessage {
    public static let kind = MessageKind.correlationResult
    public var lastAnchor: UInt64
    public var correlations: [(anchor: UInt64, correlation: Correlation)]
    public var deleted: [(anchor: UInt64, uuid: UUID)]

    public init(
        lastAnchor: UInt64, correlations: [(anchor: UInt64, correlation: Correlation)],
        deleted: [(anchor: UInt64, uuid: UUID)] = []
    ) {
        self.lastAnchor = lastAnchor
        self.correlations = correlations
        self.deleted = deleted
    }

    public func encode(into w: inout ByteWriter) {
        w.writeVarint(lastAnchor)
        w.writeList(correlations) {
            $0.writeVarint($1.anchor)
            $0.writeCorrelation($1.correlation)
        }
        w.writeDeletions(deleted)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        lastAnchor = try r.readVarint()
        correlations = try r.readList(
            "correlation", limits: limits, minBytes: ByteReader.minCorrelationBytes + 1,
            max: CorrelationInsert.maxCorrelations
        ) { (try $0.readVarint(), try $0.readCorrelation(limits)) }
        deleted = try r.readDeletions("deleted correlation", limits: limits)
    }

    public static func == (a: CorrelationResult, b: CorrelationResult) -> Bool {
        a.lastAnchor == b.lastAnchor && a.correlations.map(\.anchor) == b.correlations.map(\.anchor)
            && a.correlations.map(\.correlation) == b.correlations.map(\.correlation)
            && a.deleted.map(\.anchor) == b.deleted.map(\.anchor) && a.deleted.map(\.uuid) == b.deleted.map(\.uuid)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(lastAnchor)
        hasher.combine(correlations.map(\.correlation))
    }
}

/// Deletes one subject's correlations by UUID (their member samples stay). Answered by ``DeleteAck``.
public struct CorrelationDelete: WireMessage {
    public static let kind = MessageKind.correlationDelete
    public var subject: String
    public var uuids: [UUID]
    /// Only this identity's correlations: set by the server's authorization, never on the wire.
    package var writer: UInt32?

    public init(subject: String, uuids: [UUID]) { (self.subject, self.uuids) = (subject, uuids) }
    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeUUIDs(uuids)
    }
    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        (subject, uuids) = (try r.readString(limits), try r.readUUIDs(limits))
    }
}
