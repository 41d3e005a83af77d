import HealthCodec
import HealthModel

// Characteristics and activity summaries (HEALTHKIT.md §13; Protocol/PROTOCOL.md, kinds 85-8B).

/// Sets or clears characteristics of one subject (an empty value clears the key). Answered by
/// ``CharacteristicsResult`` with the subject's characteristics afterwards.
public struct CharacteristicsSet: WireMessage {
    public static let kind = MessageKind.characteristicsSet
    public var subject: String
    public var entries: [CharacteristicEntry]

    public init(subject: String, entries: [CharacteristicEntry]) {
        self.subject = subject
        self.entries = entries
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeCharacteristics(entries)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        entries = try r.readCharacteristics()
    }
}

/// Asks for one subject's characteristics (HealthKit's characteristic query). Answered by
/// ``CharacteristicsResult``.
public struct CharacteristicsQuery: WireMessage {
    public static let kind = MessageKind.characteristicsQuery
    public var subject: String

    public init(subject: String) {
        self.subject = subject
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
    }
}

/// A subject's characteristics: the keys set, in key order, with their short-form values.
public struct CharacteristicsResult: WireMessage {
    public static let kind = MessageKind.characteristicsResult
    public var entries: [CharacteristicEntry]

    public init(entries: [CharacteristicEntry]) {
        self.entries = entries
    }

    /// The characteristics the entries describe (entries a newer server knows and this client does not are
    /// left out).
    public var characteristics: Characteristics {
        var result = Characteristics()
        for entry in entries {
            guard let key = CharacteristicKey(rawValue: entry.key) else { continue }
            result.set(key, stored: entry.value)
        }
        return result
    }

    public func encode(into w: inout ByteWriter) {
        w.writeCharacteristics(entries)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        entries = try r.readCharacteristics()
    }
}

/// Stores activity summaries for one subject, each replacing the one of its day; all or none. Answered by
/// ``ActivitySummaryInsertAck``.
public struct ActivitySummaryInsert: WireMessage {
    public static let kind = MessageKind.activitySummaryInsert
    /// At most this many summaries in one request.
    public static let maxSummaries = ProfileFieldLimits.maxActivitySummaries
    public var subject: String
    public var summaries: [ActivitySummary]

    public init(subject: String, summaries: [ActivitySummary]) {
        self.subject = subject
        self.summaries = summaries
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeActivitySummaries(summaries)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        summaries = try r.readActivitySummaries()
    }
}

/// How many days of an ``ActivitySummaryInsert`` changed (new, or with other values) and how many were stored
/// already as sent.
public struct ActivitySummaryInsertAck: WireMessage {
    public static let kind = MessageKind.activitySummaryInsertAck
    public var changed: UInt64
    public var unchanged: UInt64

    public init(changed: UInt64, unchanged: UInt64) {
        self.changed = changed
        self.unchanged = unchanged
    }

    public func encode(into w: inout ByteWriter) {
        w.writeVarint(changed)
        w.writeVarint(unchanged)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        changed = try r.readVarint()
        unchanged = try r.readVarint()
    }
}

/// Asks for one subject's activity summaries from day `first` through day `last` (day numbers, both included,
/// either open), as HealthKit's `predicate(forActivitySummariesBetweenStart:end:)`. Answered by
/// ``ActivitySummaryResult``.
public struct ActivitySummaryQuery: WireMessage {
    public static let kind = MessageKind.activitySummaryQuery
    public var subject: String
    public var first: Int?
    public var last: Int?

    public init(subject: String, first: Int? = nil, last: Int? = nil) {
        self.subject = subject
        self.first = first
        self.last = last
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.write(UInt8(first == nil ? 0 : 1) | UInt8(last == nil ? 0 : 2))
        if let first { w.writeSignedVarint(Int64(first)) }
        if let last { w.writeSignedVarint(Int64(last)) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        let flags = try r.readByte()
        guard flags & ~3 == 0 else {
            throw CodecError(.malformedPayload, "unknown activity summary query flags \(flags) before byte \(r.offset)")
        }
        func day() throws -> Int {
            let at = r.offset
            guard let day = Int(exactly: try r.readSignedVarint()), ActivitySummary.days.contains(day) else {
                throw CodecError(.malformedPayload, "activity summary query day out of range at offset \(at)")
            }
            return day
        }
        first = flags & 1 != 0 ? try day() : nil
        last = flags & 2 != 0 ? try day() : nil
    }
}

/// The activity summaries an ``ActivitySummaryQuery`` found, by day.
public struct ActivitySummaryResult: WireMessage {
    public static let kind = MessageKind.activitySummaryResult
    public var summaries: [ActivitySummary]

    public init(summaries: [ActivitySummary]) {
        self.summaries = summaries
    }

    public func encode(into w: inout ByteWriter) {
        w.writeActivitySummaries(summaries)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        summaries = try r.readActivitySummaries()
    }
}
