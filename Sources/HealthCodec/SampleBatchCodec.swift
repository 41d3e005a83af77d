import Foundation
import HealthModel

/// Encodes a ``SampleBatch`` as the columnar payload of Protocol/SAMPLE-BATCH.md, and decodes it back under
/// ``BatchLimits``.
///
/// The payload is uncompressed; the frame layer deflates it whole. Stateless and thread-safe.
public enum SampleBatchCodec {
    /// The layout version, the payload's first byte.
    public static let layoutVersion: UInt8 = 1

    /// Bits of the flags byte.
    enum Flag {
        static let uuids: UInt8 = 0x01
        static let metadata: UInt8 = 0x02
        static let valueDigits: UInt8 = 0x04
        static let known: UInt8 = uuids | metadata | valueDigits
    }

    /// Encodes `batch`; `valueEncoding` nil picks ``ValueEncoding/best(for:)``.
    ///
    /// Throws ``CodecError`` when the columns have different lengths, a source index is outside the dictionary,
    /// or ``ValueEncoding/integerDelta`` is forced on values that are not exact integers.
    public static func encode(_ batch: SampleBatch, valueEncoding: ValueEncoding? = nil) throws -> [UInt8] {
        var writer = ByteWriter(capacity: 64 + batch.count * 4)
        try encode(batch, valueEncoding: valueEncoding, into: &writer)
        return writer.bytes
    }

    /// Appends the encoding of `batch` to `writer` (see ``encode(_:valueEncoding:)``).
    public static func encode(
        _ batch: SampleBatch, valueEncoding: ValueEncoding? = nil, into writer: inout ByteWriter
    ) throws {
        do {
            try batch.validateShape()
        } catch let error as HealthError {
            throw CodecError(error.code, error.message)
        }
        let encoding = valueEncoding ?? ValueEncoding.best(for: batch.values)
        if encoding == .integerDelta, let bad = batch.values.first(where: { !ValueEncoding.isExactInteger($0) }) {
            throw CodecError(.invalidArgument, "value \(bad) cannot be sent with the integer-delta encoding")
        }
        writer.write(layoutVersion)
        writer.writeLE(batch.batchID)
        writer.writeString(batch.subject)
        writer.writeString(batch.typeIdentifier)
        writer.writeString(batch.unit)
        writer.write(
            (batch.uuids == nil ? 0 : Flag.uuids) | (batch.metadata == nil ? 0 : Flag.metadata)
                | (batch.valueDigits == nil ? 0 : Flag.valueDigits))
        writer.write(encoding.rawValue)
        if let digits = batch.valueDigits { writer.write(UInt8(digits)) }
        writer.writeSources(batch.sources)
        writer.writeVarint(UInt64(batch.count))
        ColumnEncoder.writeStarts(batch.starts, into: &writer)
        ColumnEncoder.writeDurations(starts: batch.starts, ends: batch.ends, into: &writer)
        ColumnEncoder.writeValues(batch.values, encoding: encoding, into: &writer)
        ColumnEncoder.writeSourceRuns(batch.sourceIndices, into: &writer)
        if let uuids = batch.uuids {
            for uuid in uuids { writer.writeUUID(uuid) }
        }
        if let metadata = batch.metadata {
            for row in metadata { MetadataCodec.write(row, into: &writer) }
        }
    }

    /// Decodes a payload that holds exactly one batch.
    ///
    /// Throws ``CodecError``: ``ErrorCode/batchTooLarge`` when a count or string passes `limits`,
    /// ``ErrorCode/malformedPayload`` for anything else (truncation, bad UTF-8, out-of-range source index,
    /// unknown flags, trailing bytes…), with a message naming the field and byte offset.
    public static func decode(_ bytes: [UInt8], limits: BatchLimits = .default) throws -> SampleBatch {
        var reader = ByteReader(bytes)
        let batch = try decode(from: &reader, limits: limits)
        try reader.expectEnd("the sample batch")
        return batch
    }

    /// The row count of the batch at the reader's position, read from its header without decoding any column
    /// (recovery sizes each series' columns with it before replaying the log). Throws ``CodecError`` for a header
    /// that does not decode; the columns are not checked.
    public static func rowCount(from reader: inout ByteReader, limits: BatchLimits = .default) throws -> Int {
        guard try reader.readByte() == layoutVersion else {
            throw CodecError(.malformedPayload, "unsupported sample batch layout version")
        }
        _ = try reader.readLE(UInt64.self)
        for _ in 0..<3 { _ = try reader.readBlob(limit: limits.maxStringBytes) }
        let flags = try reader.readByte()
        _ = try reader.readByte()
        if flags & Flag.valueDigits != 0 { _ = try reader.readByte() }
        let sources = try reader.readCount("source count", limit: limits.maxSources)
        for _ in 0..<(4 * sources) { _ = try reader.readBlob(limit: limits.maxStringBytes) }
        return try reader.readCount("row count", limit: limits.maxRows)
    }

    /// Decodes one batch at the reader's position and moves the reader past it.
    public static func decode(from reader: inout ByteReader, limits: BatchLimits = .default) throws -> SampleBatch {
        let end = reader.endIndex
        var offset = reader.offset
        let batch = try reader.bytes.withUnsafeBufferPointer { buffer -> SampleBatch in
            guard let base = buffer.baseAddress else {
                throw CodecError(.malformedPayload, "empty sample batch payload")
            }
            var cursor = ColumnCursor(base: base, offset: offset, end: end)
            let batch = try BatchDecoder.decode(&cursor, limits: limits)
            offset = cursor.offset
            return batch
        }
        reader.offset = offset
        return batch
    }
}
