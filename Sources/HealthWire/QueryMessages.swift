import HealthCodec
import HealthModel

/// HKSampleQuery: samples of one type for one subject, filtered, sorted and limited, from the first row or after
/// a page token.
///
/// Answered by one or more ``SampleResult`` frames; all but the last carry ``FrameFlags/more``.
public struct SampleQuery: WireMessage {
    public static let kind = MessageKind.sampleQuery
    public var subject: String
    public var type: String
    public var filter: SampleFilter
    public var sort: SampleSort
    /// Most samples to return; 0 means no limit.
    public var limit: UInt64
    /// Unit of the returned values; empty means the type's canonical unit.
    public var unit: String
    /// Where to continue: a previous answer's ``SampleResult/next`` (rows after its position); `nil`: from the
    /// first row. On the wire only when set, after the unit, so older payloads still decode.
    public var after: PageToken?

    public init(
        subject: String, type: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending,
        limit: UInt64 = 0, unit: String = "", after: PageToken? = nil
    ) {
        self.subject = subject
        self.type = type
        self.filter = filter
        self.sort = sort
        self.limit = limit
        self.unit = unit
        self.after = after
    }

    public func encode(into w: inout ByteWriter) {
        w.writeScope(subject: subject, type: type, filter: filter)
        w.write(sort.rawValue)
        w.writeVarint(limit)
        w.writeString(unit)
        if let after { w.writeBlob(after.bytes) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        (subject, type, filter) = try r.readScope(limits)
        sort = try r.readEnum(SampleSort.self, "sort order")
        limit = try r.readVarint()
        unit = try r.readString(limits)
        after = try r.readOptionalPageToken(limits)
    }
}

/// One chunk of a sample query's answer: the rows as a batch with explicit UUIDs, in the query's sort order.
public struct SampleResult: WireMessage {
    public static let kind = MessageKind.sampleResult
    public var batch: SampleBatch
    /// On the last frame of an answer whose limit left rows out: the token to send as the next query's
    /// ``SampleQuery/after``; `nil` when no row is left. On the wire only when set, after the batch.
    public var next: PageToken?

    public init(batch: SampleBatch, next: PageToken? = nil) {
        self.batch = batch
        self.next = next
    }

    public func encode(into w: inout ByteWriter) {
        w.writeBatch(batch)
        if let next { w.writeBlob(next.bytes) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        batch = try r.readBatch(limits)
        next = try r.readOptionalPageToken(limits)
    }
}

/// HKStatisticsQuery: the requested figures over every matching sample.
public struct StatisticsQuery: WireMessage {
    public static let kind = MessageKind.statisticsQuery
    public var subject: String
    public var type: String
    public var filter: SampleFilter
    public var options: StatisticsOptions
    /// Unit of the returned figures; empty means canonical.
    public var unit: String

    public init(
        subject: String, type: String, filter: SampleFilter = .all, options: StatisticsOptions, unit: String = ""
    ) {
        self.subject = subject
        self.type = type
        self.filter = filter
        self.options = options
        self.unit = unit
    }

    public func encode(into w: inout ByteWriter) {
        w.writeScope(subject: subject, type: type, filter: filter)
        w.writeLE(options.rawValue)
        w.writeString(unit)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        (subject, type, filter) = try r.readScope(limits)
        options = StatisticsOptions(rawValue: try r.readLE(UInt16.self))
        unit = try r.readString(limits)
    }
}

/// The answer to a ``StatisticsQuery``. "No data" is an error reply (``ErrorCode/noData``), not this message.
public struct StatisticsResult: WireMessage {
    public static let kind = MessageKind.statisticsResult
    /// The unit of every figure (the canonical unit when the query named none).
    public var unit: String
    public var statistics: Statistics

    public init(unit: String, statistics: Statistics) {
        self.unit = unit
        self.statistics = statistics
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(unit)
        w.writeStatistics(statistics)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        unit = try r.readString(limits)
        statistics = try r.readStatistics(limits)
    }
}

/// HKStatisticsCollectionQuery: statistics per calendar bucket in a time zone (HEALTHKIT.md §7).
///
/// Answered by ``CollectionResult`` frames (``FrameFlags/more`` on all but the last).
public struct CollectionQuery: WireMessage {
    public static let kind = MessageKind.collectionQuery
    public var subject: String
    public var type: String
    public var filter: SampleFilter
    public var options: StatisticsOptions
    /// Fixes the buckets' phase: bucket k starts at anchor ⊕ k·interval.
    public var anchor: Timestamp
    public var interval: CalendarInterval
    /// IANA zone id, e.g. `America/New_York`.
    public var timeZone: String
    public var unit: String
    /// With both bounds, every bucket between them is listed, empty ones included; otherwise only buckets with data.
    public var enumerateFrom: Timestamp?
    public var enumerateTo: Timestamp?

    public init(
        subject: String, type: String, filter: SampleFilter = .all, options: StatisticsOptions, anchor: Timestamp,
        interval: CalendarInterval, timeZone: String, unit: String = "", enumerateFrom: Timestamp? = nil,
        enumerateTo: Timestamp? = nil
    ) {
        self.subject = subject
        self.type = type
        self.filter = filter
        self.options = options
        self.anchor = anchor
        self.interval = interval
        self.timeZone = timeZone
        self.unit = unit
        self.enumerateFrom = enumerateFrom
        self.enumerateTo = enumerateTo
    }

    public func encode(into w: inout ByteWriter) {
        w.writeScope(subject: subject, type: type, filter: filter)
        w.writeLE(options.rawValue)
        w.writeTimestamp(anchor)
        w.write(interval.unit.rawValue)
        w.writeVarint(UInt64(interval.count))
        w.writeString(timeZone)
        w.writeString(unit)
        w.writeOptionalTimestamp(enumerateFrom)
        w.writeOptionalTimestamp(enumerateTo)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        (subject, type, filter) = try r.readScope(limits)
        options = StatisticsOptions(rawValue: try r.readLE(UInt16.self))
        anchor = try r.readTimestamp()
        let unit = try r.readEnum(CalendarInterval.Unit.self, "interval unit")
        interval = CalendarInterval(try r.readCount("interval count", limit: CalendarInterval.maxCount), unit)
        timeZone = try r.readString(limits)
        self.unit = try r.readString(limits)
        enumerateFrom = try r.readOptionalTimestamp()
        enumerateTo = try r.readOptionalTimestamp()
    }
}

/// One chunk of a collection's buckets, in time order; each bucket's start and end are its boundaries.
public struct CollectionResult: WireMessage {
    public static let kind = MessageKind.collectionResult
    public var unit: String
    public var buckets: [Statistics]

    public init(unit: String, buckets: [Statistics]) {
        self.unit = unit
        self.buckets = buckets
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(unit)
        w.writeVarint(UInt64(buckets.count))
        for bucket in buckets { w.writeStatistics(bucket) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        unit = try r.readString(limits)
        let count = try r.readListCount("bucket", limits: limits, minBytes: 4)
        var buckets: [Statistics] = []
        buckets.reserveCapacity(count)
        for _ in 0..<count { buckets.append(try r.readStatistics(limits)) }
        self.buckets = buckets
    }
}

/// HKAnchoredObjectQuery: samples added and deleted since an anchor, in arrival order (HEALTHKIT.md §9).
public struct ChangesQuery: WireMessage {
    public static let kind = MessageKind.changesQuery
    public var subject: String
    public var type: String
    public var filter: SampleFilter
    /// The anchor of the previous answer; 0 means from the beginning.
    public var anchor: UInt64
    /// Most added samples plus deleted objects to return; 0 means no limit.
    public var limit: UInt64
    public var unit: String

    public init(
        subject: String, type: String, filter: SampleFilter = .all, anchor: UInt64 = 0, limit: UInt64 = 0,
        unit: String = ""
    ) {
        self.subject = subject
        self.type = type
        self.filter = filter
        self.anchor = anchor
        self.limit = limit
        self.unit = unit
    }

    public func encode(into w: inout ByteWriter) {
        w.writeScope(subject: subject, type: type, filter: filter)
        w.writeVarint(anchor)
        w.writeVarint(limit)
        w.writeString(unit)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        (subject, type, filter) = try r.readScope(limits)
        anchor = try r.readVarint()
        limit = try r.readVarint()
        unit = try r.readString(limits)
    }
}

/// The answer to a ``ChangesQuery`` (and the content of anchored subscription updates).
public struct ChangesResult: WireMessage {
    public static let kind = MessageKind.changesResult
    /// Samples added since the anchor, in arrival order, with explicit UUIDs.
    public var added: SampleBatch
    public var deleted: [DeletedObject]
    /// Pass this anchor to the next query.
    public var anchor: UInt64
    /// Whether more changes are waiting beyond the limit.
    public var hasMore: Bool

    public init(added: SampleBatch, deleted: [DeletedObject], anchor: UInt64, hasMore: Bool) {
        self.added = added
        self.deleted = deleted
        self.anchor = anchor
        self.hasMore = hasMore
    }

    public func encode(into w: inout ByteWriter) {
        w.writeBatch(added)
        w.writeVarint(UInt64(deleted.count))
        for object in deleted {
            w.writeUUID(object.uuid)
            w.writeString(object.syncIdentifier)
            w.writeSignedVarint(object.syncVersion)
        }
        w.writeVarint(anchor)
        w.writeBool(hasMore)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        added = try r.readBatch(limits)
        let count = try r.readListCount("deleted object", limits: limits, minBytes: 18)
        var deleted: [DeletedObject] = []
        deleted.reserveCapacity(count)
        for _ in 0..<count {
            deleted.append(
                DeletedObject(
                    uuid: try r.readUUID(), syncIdentifier: try r.readString(limits),
                    syncVersion: try r.readSignedVarint()))
        }
        self.deleted = deleted
        anchor = try r.readVarint()
        hasMore = try r.readBool()
    }
}
