import Foundation
import HealthCodec
import HealthModel

/// Limits applied while decoding message payloads; every count is checked before anything is allocated.
public struct MessageLimits: Hashable, Sendable {
    /// Limits for columnar sample batches (insert, results, changes).
    public var batch: BatchLimits
    /// Largest number of entries in any other list (UUIDs, types, sources, buckets, identities).
    public var maxListEntries: Int
    /// Longest string, in UTF-8 bytes.
    public var maxStringBytes: Int

    public init(batch: BatchLimits = .default, maxListEntries: Int = 1_000_000, maxStringBytes: Int = 65_536) {
        self.batch = batch
        self.maxListEntries = maxListEntries
        self.maxStringBytes = maxStringBytes
    }

    public static let standard = MessageLimits()
}

/// A message with a fixed kind and a payload encoding (Protocol/PROTOCOL.md gives each byte layout).
public protocol WireMessage: Hashable, Sendable {
    static var kind: MessageKind { get }
    /// Appends the payload bytes.
    func encode(into writer: inout ByteWriter)
    /// Decodes a payload; throws ``CodecError`` for malformed bytes.
    init(from reader: inout ByteReader, limits: MessageLimits) throws
}

extension WireMessage {
    /// The payload bytes.
    public func encodedPayload() -> [UInt8] {
        var writer = ByteWriter()
        encode(into: &writer)
        return writer.bytes
    }

    /// Decodes a whole payload, rejecting trailing bytes.
    public init(payload: [UInt8], limits: MessageLimits = .standard) throws {
        var reader = ByteReader(payload)
        try self.init(from: &reader, limits: limits)
        try reader.expectEnd("the payload")
    }
}

// MARK: - Shared field encodings

extension ByteWriter {
    mutating func writeTimestamp(_ value: Timestamp) { writeSignedVarint(value) }

    mutating func writeOptionalTimestamp(_ value: Timestamp?) {
        writeBool(value != nil)
        if let value { writeTimestamp(value) }
    }

    mutating func writeStrings(_ values: [String]) {
        writeVarint(UInt64(values.count))
        for value in values { writeString(value) }
    }

    mutating func writeSource(_ source: SourceInfo) {
        writeString(source.name)
        writeString(source.bundleIdentifier)
        writeString(source.version)
        writeString(source.device)
    }

    mutating func writeSources(_ sources: [SourceInfo]) {
        writeVarint(UInt64(sources.count))
        for source in sources { writeSource(source) }
    }

    mutating func writeUUIDs(_ uuids: [UUID]) {
        writeVarint(UInt64(uuids.count))
        for uuid in uuids { writeUUID(uuid) }
    }

    /// What a query reads: subject, quantity type and filter, the first fields of every query message.
    mutating func writeScope(subject: String, type: String, filter: SampleFilter) {
        writeString(subject)
        writeString(type)
        writeFilter(filter)
    }

    /// Date predicate, source filter and UUID filter behind one flags byte.
    mutating func writeFilter(_ filter: SampleFilter) {
        let date = filter.date
        var flags: UInt8 = 0
        if date.start != nil { flags |= 1 << 0 }
        if date.end != nil { flags |= 1 << 1 }
        if date.strictStartDate { flags |= 1 << 2 }
        if date.strictEndDate { flags |= 1 << 3 }
        if filter.sources != nil { flags |= 1 << 4 }
        if filter.uuids != nil { flags |= 1 << 5 }
        write(flags)
        if let start = date.start { writeTimestamp(start) }
        if let end = date.end { writeTimestamp(end) }
        if let sources = filter.sources { writeStrings(sources.sorted()) }
        if let uuids = filter.uuids { writeUUIDs(uuids.sorted { $0.uuidString < $1.uuidString }) }
    }

    mutating func writeFigures(_ figures: StatisticsFigures) {
        var present: UInt8 = 0
        if figures.sum != nil { present |= 1 << 0 }
        if figures.average != nil { present |= 1 << 1 }
        if figures.minimum != nil { present |= 1 << 2 }
        if figures.maximum != nil { present |= 1 << 3 }
        if figures.mostRecent != nil { present |= 1 << 4 }
        if figures.duration != nil { present |= 1 << 5 }
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

    mutating func readOptionalTimestamp() throws -> Timestamp? {
        try readBool() ? try readTimestamp() : nil
    }

    mutating func readString(_ limits: MessageLimits) throws -> String { try readString(limit: limits.maxStringBytes) }

    /// Reads a list count, capped by the limits and by the bytes left (each entry takes at least `minBytes`).
    mutating func readListCount(_ what: String, limits: MessageLimits, minBytes: Int = 1) throws -> Int {
        let count = try readCount("\(what) count", limit: limits.maxListEntries)
        guard count <= remaining / max(minBytes, 1) else {
            throw CodecError(
                .malformedPayload, "\(what) count \(count) is larger than the \(remaining) bytes left can hold")
        }
        return count
    }

    mutating func readStrings(_ what: String, limits: MessageLimits) throws -> [String] {
        let count = try readListCount(what, limits: limits)
        var values: [String] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try readString(limits)) }
        return values
    }

    mutating func readSource(_ limits: MessageLimits) throws -> SourceInfo {
        SourceInfo(
            name: try readString(limits), bundleIdentifier: try readString(limits), version: try readString(limits),
            device: try readString(limits))
    }

    mutating func readSources(_ limits: MessageLimits) throws -> [SourceInfo] {
        let count = try readListCount("source", limits: limits, minBytes: 4)
        var sources: [SourceInfo] = []
        sources.reserveCapacity(count)
        for _ in 0..<count { sources.append(try readSource(limits)) }
        return sources
    }

    mutating func readUUIDs(_ limits: MessageLimits) throws -> [UUID] {
        let count = try readListCount("UUID", limits: limits, minBytes: 16)
        var uuids: [UUID] = []
        uuids.reserveCapacity(count)
        for _ in 0..<count { uuids.append(try readUUID()) }
        return uuids
    }

    /// Subject, quantity type and filter, as ``ByteWriter/writeScope(subject:type:filter:)`` wrote them.
    mutating func readScope(_ limits: MessageLimits) throws -> (subject: String, type: String, filter: SampleFilter) {
        (try readString(limits), try readString(limits), try readFilter(limits))
    }

    mutating func readFilter(_ limits: MessageLimits) throws -> SampleFilter {
        let flags = try readByte()
        guard flags & 0b1100_0000 == 0 else {
            throw CodecError(.malformedPayload, "unknown predicate flag bits 0x\(hex(flags))")
        }
        var date = DatePredicate(strictStartDate: flags & 1 << 2 != 0, strictEndDate: flags & 1 << 3 != 0)
        if flags & 1 << 0 != 0 { date.start = try readTimestamp() }
        if flags & 1 << 1 != 0 { date.end = try readTimestamp() }
        var filter = SampleFilter(date: date)
        if flags & 1 << 4 != 0 { filter.sources = Set(try readStrings("source filter", limits: limits)) }
        if flags & 1 << 5 != 0 { filter.uuids = Set(try readUUIDs(limits)) }
        return filter
    }

    mutating func readFigures() throws -> StatisticsFigures {
        let present = try readByte()
        guard present & 0b1100_0000 == 0 else {
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
        return figures
    }

    mutating func readStatistics(_ limits: MessageLimits) throws -> Statistics {
        let start = try readTimestamp()
        let end = try readTimestamp()
        let figures = try readFigures()
        let count = try readListCount("source statistics", limits: limits, minBytes: 5)
        var bySource: [SourceStatistics] = []
        bySource.reserveCapacity(count)
        for _ in 0..<count {
            bySource.append(SourceStatistics(source: try readSource(limits), figures: try readFigures()))
        }
        return Statistics(start: start, end: end, figures: figures, bySource: bySource)
    }

    mutating func readBatch(_ limits: MessageLimits) throws -> SampleBatch {
        let length = try readCount("sample batch length", limit: remaining)
        var inner = ByteReader(bytes, offset: offset, endIndex: offset + length)
        let batch = try SampleBatchCodec.decode(from: &inner, limits: limits.batch)
        try inner.expectEnd("the sample batch")
        _ = try readBytes(length)
        return batch
    }

    /// Reads a one-byte enumeration value, naming the field when the byte is unknown.
    mutating func readEnum<T: RawRepresentable>(_ type: T.Type, _ what: String) throws -> T where T.RawValue == UInt8 {
        let byte = try readByte()
        guard let value = T(rawValue: byte) else { throw CodecError(.malformedPayload, "unknown \(what) \(byte)") }
        return value
    }
}
