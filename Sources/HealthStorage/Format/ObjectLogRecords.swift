import Foundation
import HealthCodec
import HealthModel

// The bodies of the log records of correlations (kinds 9 and 10) and workout routes (kind 11).

extension Correlation {
    /// The type correlation log records and the manifest entry of the correlation snapshot name.
    public static let storageType = "correlation"
}

extension WorkoutRoute {
    /// The type route log records and the manifest entry of the route snapshot name.
    public static let storageType = "route"
}

extension LogChange {
    /// Decodes the body of a correlation record (kinds 9 and 10, Protocol/STORAGE.md): the record's type must be
    /// ``Correlation/storageType``.
    static func decodeCorrelationChange(
        _ kind: LogRecordKind, subject: String, type: String, _ r: inout ByteReader
    ) throws -> LogChange {
        guard type == Correlation.storageType else {
            throw CodecError(.malformedPayload, "\(kind) record names type \(type)")
        }
        if kind == .correlationDelete {
            let writer = try r.readBool() ? try readWriter(&r) : nil
            return .correlationDelete(subject: subject, uuids: try r.readUUIDs(FieldCaps.storage), writer: writer)
        }
        let (writer, correlations) = try readObjects(&r, "correlation", minBytes: ByteReader.minCorrelationBytes) {
            try $0.readCorrelation(FieldCaps.storage)
        }
        return .correlations(subject: subject, correlations, writer: writer)
    }

    /// Decodes the body of a route record (kind 11, Protocol/STORAGE.md): the record's type must be
    /// ``WorkoutRoute/storageType``.
    static func decodeRoutes(subject: String, type: String, _ r: inout ByteReader) throws -> LogChange {
        guard type == WorkoutRoute.storageType else {
            throw CodecError(.malformedPayload, "route record names type \(type)")
        }
        let (writer, routes) = try readObjects(&r, "route", minBytes: ByteReader.minRouteBytes) {
            try $0.readRoute(FieldCaps.storage)
        }
        return .routes(subject: subject, routes, writer: writer)
    }

    /// Reads `varint writer` (0: unknown) and `varint n`, then n objects with `read`.
    private static func readObjects<Object>(
        _ r: inout ByteReader, _ what: String, minBytes: Int, _ read: (inout ByteReader) throws -> Object
    ) throws -> (UInt32, [Object]) {
        let writer = try r.readVarint()
        guard let writer = UInt32(exactly: writer) else {
            throw CodecError(.malformedPayload, "writer id \(writer) is out of range")
        }
        return (writer, try r.readList(what, limits: FieldCaps.storage, minBytes: minBytes, max: Int.max, read))
    }
}
