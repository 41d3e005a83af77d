import Foundation
import HealthCodec
import HealthModel

extension Correlation {
    /// The type correlation log records and the manifest entry of the correlation snapshot name.
    public static let storageType = "correlation"
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
        let writer = try r.readVarint()
        guard let writer = UInt32(exactly: writer) else {
            throw CodecError(.malformedPayload, "writer id \(writer) is out of range")
        }
        let correlations = try r.readList(
            "correlation", limits: FieldCaps.storage, minBytes: ByteReader.minCorrelationBytes, max: Int.max
        ) { try $0.readCorrelation(FieldCaps.storage) }
        return .correlations(subject: subject, correlations, writer: writer)
    }
}
