import HealthCodec
import HealthModel

// Field layouts only the protocol uses: timestamps, query scopes, statistics, length-prefixed batches. Those the
// storage formats share too (strings, UUIDs, sources, filters) live in HealthCodec.
extension ByteWriter {
    mutating func writeTimestamp(_ value: Timestamp) { writeSignedVarint(value) }

    mutating func writeOptionalTimestamp(_ value: Timestamp?) {
        writeBool(value != nil)
        if let value { writeTimestamp(value) }
    }

    /// What a query reads: subject, quantity type and filter, the first fields of every query message.
    mutating func writeScope(subject: String, type: String, filter: SampleFilter) {
        writeString(subject)
        writeString(type)
        writeFilter(filter, carryingWriter: false)
    }

    mutating func writeFigures(_ figures: StatisticsFigures) {
        var present: UInt8 = 0
        if figures.sum != nil { present |= 1 << 0 }
        if figures.average != nil { present |= 1 << 1 }
        if figures.minimum != nil { present |= 1 << 2 }
        if figures.maximum != nil { present |= 1 << 3 }
        if figures.mostRecent != nil { present |= 1 << 4 }
        if figures.duration != nil { present |= 1 << 5 }
        if figures.durationByValue != nil { present |= 1 << 6 }
        write(present)
        if let sum = figures.sum { writeDouble(sum) }
        if let average = figures.average { writeDouble(average) }
        if let minimum = figures.minimum { writeDouble(minimum) }
        if let maximum = figures.maximum { writeDouble(maximum) }
        if let recent = figures.mostRecent {
            writeDouble(recent.value)
            writeTimestamp(recent.start)
            writeTimestamp(recent.end)
        }
        if let duration = figures.duration { writeSignedVarint(duration) }
        if let byValue = figures.durationByValue {
            writeVarint(UInt64(byValue.count))
            for entry in byValue {
                writeSignedVarint(Int64(entry.value))
                writeSignedVarint(entry.duration)
            }
        }
    }

    mutating func writeStatistics(_ statistics: Statistics) {
        writeTimestamp(statistics.start)
        writeTimestamp(statistics.end)
        writeFigures(statistics.figures)
        writeVarint(UInt64(statistics.bySource.count))
        for entry in statistics.bySource {
            writeSource(entry.source)
            writeFigures(entry.figures)
        }
    }

    /// A columnar sample batch, length-prefixed (Protocol/SAMPLE-BATCH.md).
    ///
    /// Precondition: `batch.validateShape()` passes (senders check it before building a message).
    mutating func writeBatch(_ batch: SampleBatch) {
        var inner = ByteWriter(capacity: 64 + batch.count * 4)
        do {
            try SampleBatchCodec.encode(batch, into: &inner)
        } catch {
            preconditionFailure("encoding a sample batch that breaks its shape rules: \(error)")
        }
        writeBlob(inner.bytes)
    }
}

extension ByteReader {
    mutating func readTimestamp() throws -> Timestamp { try readSignedVarint() }

    /// A page token ending a payload: absent (nothing left) or empty means none.
    mutating func readOptionalPageToken(_ limits: MessageLimits) throws -> PageToken? {
        guard remaining > 0 else { return nil }
        let bytes = try readBlob(limit: limits.maxStringBytes)
        return bytes.isEmpty ? nil : PageToken(bytes: bytes)
    }

    mutating func readOptionalTimestamp() throws -> Timestamp? {
        try readBool() ? try readTimestamp() : nil
    }

    /// Subject, quantity type and filter, as ``ByteWriter/writeScope(subject:type:filter:)`` wrote them.
    mutating func readScope(_ limits: MessageLimits) throws -> (subject: String, type: String, filter: SampleFilter) {
        (try readString(limits), try readString(limits), try readFilter(limits, carryingWriter: false))
    }

    mutating func readFigures(_ limits: MessageLimits) throws -> StatisticsFigures {
        let present = try readByte()
        guard present & 0b1000_0000 == 0 else {
            throw CodecError(.malformedPayload, "unknown statistics figure bits 0x\(hex(present))")
        }
        var figures = StatisticsFigures()
        if present & 1 << 0 != 0 { figures.sum = try readDouble() }
        if present & 1 << 1 != 0 { figures.average = try readDouble() }
        if present & 1 << 2 != 0 { figures.minimum = try readDouble() }
        if present & 1 << 3 != 0 { figures.maximum = try readDouble() }
        if present & 1 << 4 != 0 {
            figures.mostRecent = MostRecent(
                value: try readDouble(), start: try readTimestamp(), end: try readTimestamp())
        }
        if present & 1 << 5 != 0 { figures.duration = try readSignedVarint() }
        if present & 1 << 6 != 0 {
            let count = try readListCount("value duration", limits: limits, minBytes: 2)
            var byValue: [ValueDuration] = []
            byValue.reserveCapacity(count)
            for _ in 0..<count {
                let raw = try readSignedVarint()
                guard let value = Int(exactly: raw) else {
                    throw CodecError(.malformedPayload, "category value \(raw) is out of range")
                }
                byValue.append(ValueDuration(value: value, duration: try readSignedVarint()))
            }
            figures.durationByValue = byValue
        }
        return figures
    }

    mutating func readStatistics(_ limits: MessageLimits) throws -> Statistics {
        let start = try readTimestamp()
        let end = try readTimestamp()
        let figures = try readFigures(limits)
        let count = try readListCount("source statistics", limits: limits, minBytes: 5)
        var bySource: [SourceStatistics] = []
        bySource.reserveCapacity(count)
        for _ in 0..<count {
            bySource.append(SourceStatistics(source: try readSource(limits), figures: try readFigures(limits)))
        }
        return Statistics(start: start, end: end, figures: figures, bySource: bySource)
    }

    mutating func readBatch(_ limits: MessageLimits) throws -> SampleBatch {
        try readBatchKeepingBytes(limits).batch
    }

    /// A length-prefixed sample batch and the bytes it was decoded from (without the length).
    mutating func readBatchKeepingBytes(_ limits: MessageLimits) throws -> (
        batch: SampleBatch, bytes: ArraySlice<UInt8>
    ) {
        let length = try readCount("sample batch length", limit: remaining)
        var inner = ByteReader(bytes, offset: offset, endIndex: offset + length)
        let batch = try SampleBatchCodec.decode(from: &inner, limits: limits.batch)
        try inner.expectEnd("the sample batch")
        let start = offset
        _ = try readBytes(length)
        return (batch, bytes[start..<(start + length)])
    }

    /// Reads a one-byte enumeration value, naming the field when the byte is unknown.
    mutating func readEnum<T: RawRepresentable>(_ type: T.Type, _ what: String) throws -> T where T.RawValue == UInt8 {
        let byte = try readByte()
        guard let value = T(rawValue: byte) else { throw CodecError(.malformedPayload, "unknown \(what) \(byte)") }
        return value
    }
}
