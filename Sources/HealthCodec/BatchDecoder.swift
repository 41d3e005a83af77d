import Foundation
import HealthModel

/// Decodes one encoded batch from a ``ColumnCursor``: the header with its limits, then each column in one tight
/// loop over raw memory, written straight into the batch's arrays (no per-row allocation except metadata).
enum BatchDecoder {
    static func decode(_ cursor: inout ColumnCursor, limits: BatchLimits) throws -> SampleBatch {
        let version = try cursor.byte("layout version")
        guard version == SampleBatchCodec.layoutVersion else {
            throw CodecError(.malformedPayload, "unsupported sample batch layout version \(version)")
        }
        let batchID = try cursor.uint64("batch id")
        let subject = try cursor.string("subject", limit: limits.maxStringBytes)
        let typeIdentifier = try cursor.string("type identifier", limit: limits.maxStringBytes)
        let unit = try cursor.string("unit", limit: limits.maxStringBytes)
        let flags = try cursor.byte("flags")
        guard flags & ~SampleBatchCodec.Flag.known == 0 else {
            throw CodecError(.malformedPayload, "unknown flag bits \(flags) at byte \(cursor.offset - 1)")
        }
        let hasUUIDs = flags & SampleBatchCodec.Flag.uuids != 0
        let hasMetadata = flags & SampleBatchCodec.Flag.metadata != 0
        let encodingByte = try cursor.byte("value encoding")
        guard let encoding = ValueEncoding(rawValue: encodingByte) else {
            throw CodecError(.malformedPayload, "unknown value encoding \(encodingByte) at byte \(cursor.offset - 1)")
        }
        var valueDigits: Int?
        if flags & SampleBatchCodec.Flag.valueDigits != 0 {
            let digits = Int(try cursor.byte("value digits"))
            guard RoundedValues.digitRange.contains(digits) else {
                throw CodecError(
                    .malformedPayload,
                    "values rounded to \(digits) digits at byte \(cursor.offset - 1); the digits are "
                        + "\(RoundedValues.digitRange.lowerBound)–\(RoundedValues.digitRange.upperBound)")
            }
            valueDigits = digits
        }

        let sourceCount = try cursor.count("source count", limit: limits.maxSources, minimumBytes: 4)
        var sources: [SourceInfo] = []
        sources.reserveCapacity(sourceCount)
        for _ in 0..<sourceCount {
            let name = try cursor.string("source name", limit: limits.maxStringBytes)
            let bundle = try cursor.string("source bundle identifier", limit: limits.maxStringBytes)
            let version = try cursor.string("source version", limit: limits.maxStringBytes)
            let device = try cursor.string("source device", limit: limits.maxStringBytes)
            sources.append(SourceInfo(name: name, bundleIdentifier: bundle, version: version, device: device))
        }

        // Each row takes at least a start byte, a duration byte, its value, its UUID and a metadata count byte.
        let rowBytes = 2 + (encoding == .raw ? 8 : 1) + (hasUUIDs ? 16 : 0) + (hasMetadata ? 1 : 0)
        let rows = try cursor.count("row count", limit: limits.maxRows, minimumBytes: rowBytes)

        let starts = try column(rows, "start column", &cursor) { (cursor, out) throws(CodecError) in
            try readStarts(&cursor, into: out)
        }
        let ends = try starts.withUnsafeBufferPointer { starts in
            try column(rows, "duration column", &cursor) {
                (cursor, out: UnsafeMutableBufferPointer<Int64>) throws(CodecError) in
                var duration: Int64 = 0
                for i in 0..<out.count {
                    duration &+= try cursor.signedVarint()
                    out[i] = starts[i] &+ duration
                }
            }
        }
        let values = try column(rows, "value column", &cursor) { (cursor, out) throws(CodecError) in
            try readValues(&cursor, encoding: encoding, into: out)
        }
        let sourceIndices = try column(rows, "source column", &cursor) { (cursor, out) throws(CodecError) in
            try readSourceRuns(&cursor, sourceCount: sourceCount, into: out)
        }
        let uuids: [UUID]? =
            hasUUIDs
            ? try column(rows, "UUID column", &cursor) { (cursor, out) throws(CodecError) in
                for i in 0..<out.count { out[i] = try cursor.uuid() }
            } : nil
        var metadata: [[String: MetadataValue]]?
        if hasMetadata {
            var column: [[String: MetadataValue]] = []
            column.reserveCapacity(rows)
            for row in 0..<rows {
                do throws(CodecError) {
                    column.append(try MetadataCodec.read(&cursor, limits: limits))
                } catch {
                    throw CodecError(error.code, "metadata of row \(row): \(error.message)")
                }
            }
            metadata = column
        }
        return SampleBatch(
            batchID: batchID, subject: subject, typeIdentifier: typeIdentifier, unit: unit, sources: sources,
            starts: starts, ends: ends, values: values, sourceIndices: sourceIndices, uuids: uuids,
            metadata: metadata, valueDigits: valueDigits)
    }

    /// Builds an array of `count` elements with `fill`, prefixing any error with the column's name.
    @inline(__always)
    private static func column<Element>(
        _ count: Int, _ name: String, _ cursor: inout ColumnCursor,
        _ fill: (inout ColumnCursor, UnsafeMutableBufferPointer<Element>) throws(CodecError) -> Void
    ) throws -> [Element] {
        try [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(CodecError) {
                try fill(&cursor, UnsafeMutableBufferPointer(rebasing: buffer[0..<count]))
            } catch {
                throw CodecError(error.code, "\(name): \(error.message)")
            }
            initialized = count
        }
    }

    /// Inverts ``ColumnEncoder/writeStarts(_:into:)``.
    @inline(__always)
    private static func readStarts(
        _ cursor: inout ColumnCursor, into out: UnsafeMutableBufferPointer<Int64>
    ) throws(CodecError) {
        guard out.count > 0 else { return }
        var previous = try cursor.signedVarint()
        out[0] = previous
        var delta: Int64 = 0
        var i = 1
        while i < out.count {
            delta &+= try cursor.signedVarint()
            previous &+= delta
            out[i] = previous
            i += 1
        }
    }

    /// Inverts ``ColumnEncoder/writeValues(_:encoding:into:)``.
    @inline(__always)
    private static func readValues(
        _ cursor: inout ColumnCursor, encoding: ValueEncoding, into out: UnsafeMutableBufferPointer<Double>
    ) throws(CodecError) {
        switch encoding {
        case .raw:
            guard cursor.remaining >= 8 * out.count else {
                throw CodecError(.malformedPayload, "truncated raw values at byte \(cursor.offset)")
            }
            let source = UnsafeRawPointer(cursor.base + cursor.offset)
            for i in 0..<out.count {
                let bits = UInt64(littleEndian: source.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self))
                out[i] = Double(bitPattern: bits)
            }
            cursor.offset += 8 * out.count
        case .xor:
            var previous: UInt64 = 0
            for i in 0..<out.count {
                previous ^= try cursor.varint().byteSwapped
                out[i] = Double(bitPattern: previous)
            }
        case .integerDelta:
            var previous: Int64 = 0
            let limit = UInt64(1) << 53
            for i in 0..<out.count {
                previous &+= try cursor.signedVarint()
                // previous + 2^53 in 0...2^54 ⇔ |previous| ≤ 2^53, one comparison.
                guard UInt64(bitPattern: previous &+ Int64(limit)) <= 2 * limit else {
                    throw CodecError(.malformedPayload, "integer value \(previous) of row \(i) is beyond ±2^53")
                }
                out[i] = Double(previous)
            }
        }
    }

    /// Inverts ``ColumnEncoder/writeSourceRuns(_:into:)``, checking every index against the dictionary.
    @inline(__always)
    private static func readSourceRuns(
        _ cursor: inout ColumnCursor, sourceCount: Int, into out: UnsafeMutableBufferPointer<UInt32>
    ) throws(CodecError) {
        var filled = 0
        while filled < out.count {
            let at = cursor.offset
            let index = try cursor.varint()
            guard index < UInt64(sourceCount) else {
                throw CodecError(
                    .malformedPayload,
                    "source index \(index) at byte \(at) is outside the dictionary of \(sourceCount)")
            }
            let length = try cursor.varint()
            guard length >= 1, length <= UInt64(out.count - filled) else {
                throw CodecError(
                    .malformedPayload,
                    "source run of \(length) rows at byte \(at) does not fit the \(out.count - filled) rows left")
            }
            let next = filled + Int(length)
            UnsafeMutableBufferPointer(rebasing: out[filled..<next]).initialize(repeating: UInt32(index))
            filled = next
        }
    }
}
