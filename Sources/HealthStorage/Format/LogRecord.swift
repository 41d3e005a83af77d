import Foundation
import HealthCodec
import HealthModel

/// The kind byte of a log record (Protocol/STORAGE.md, "Log segment").
public enum LogRecordKind: UInt8, Sendable, CaseIterable {
    /// A batch written by no known identity (writer 0; what hkd wrote before identities existed).
    case insert = 1
    /// A deletion by filter.
    case delete = 2
    /// A source priority order.
    case sourcePriority = 3
    /// A batch written by a client identity: its writer id, then the batch.
    case insertByIdentity = 4
    /// Workouts added for a subject (type `workout`): the writer (0: unknown), then the workouts.
    case workouts = 5
    /// Workouts deleted by UUID (type `workout`), optionally only one writer's.
    case workoutDelete = 6
    /// Characteristics set or cleared for a subject (type `characteristics`): the entries, normalized.
    case characteristics = 7
    /// Activity summaries stored for a subject (type `activitySummary`), each replacing its day's.
    case activitySummaries = 8
    /// Correlations added for a subject (type `correlation`): the writer (0: unknown), then the correlations.
    case correlations = 9
    /// Correlations deleted by UUID (type `correlation`), optionally only one writer's.
    case correlationDelete = 10
    /// Workout routes added for a subject (type `route`): the writer (0: unknown), then the routes.
    case routes = 11
}

/// One change the write-ahead log keeps: every record names its subject and quantity type (Protocol/STORAGE.md).
public enum LogChange: Hashable, Sendable {
    /// A batch as received (its own subject and type inside), written by client identity `writer` (0: unknown).
    case insert(SampleBatch, writer: UInt32 = 0)
    /// Deletion of one subject's samples of a type matching a filter (UUIDs included).
    case delete(subject: String, type: String, filter: SampleFilter)
    /// A new source priority order for one subject and type.
    case sourcePriority(subject: String, type: String, order: [SourceInfo])
    /// Workouts added for a subject by `writer` (0: unknown) (HEALTHKIT.md §13).
    case workouts(subject: String, [Workout], writer: UInt32)
    /// Deletion of a subject's workouts by UUID; `writer`: only that identity's.
    case workoutDelete(subject: String, uuids: [UUID], writer: UInt32?)
    /// Characteristics of a subject set (short-form value) or cleared (empty value), in order (HEALTHKIT.md §13).
    case characteristics(subject: String, [CharacteristicEntry])
    /// Activity summaries of a subject, each replacing the one of its day (HEALTHKIT.md §13).
    case activitySummaries(subject: String, [ActivitySummary])
    /// Correlations added for a subject by `writer` (0: unknown) (HEALTHKIT.md §13).
    case correlations(subject: String, [Correlation], writer: UInt32)
    /// Deletion of a subject's correlations by UUID; `writer`: only that identity's.
    case correlationDelete(subject: String, uuids: [UUID], writer: UInt32?)
    /// Workout routes added for a subject by `writer` (0: unknown).
    case routes(subject: String, [WorkoutRoute], writer: UInt32)

    /// The record kind.
    public var kind: LogRecordKind {
        switch self {
        case .insert(_, let writer): writer == 0 ? .insert : .insertByIdentity
        case .delete: .delete
        case .sourcePriority: .sourcePriority
        case .workouts: .workouts
        case .workoutDelete: .workoutDelete
        case .characteristics: .characteristics
        case .activitySummaries: .activitySummaries
        case .correlations: .correlations
        case .correlationDelete: .correlationDelete
        case .routes: .routes
        }
    }

    /// The subject the change is about.
    public var subject: String {
        switch self {
        case .insert(let batch, _): batch.subject
        case .delete(let subject, _, _), .sourcePriority(let subject, _, _): subject
        case .workouts(let subject, _, _), .workoutDelete(let subject, _, _): subject
        case .characteristics(let subject, _), .activitySummaries(let subject, _): subject
        case .correlations(let subject, _, _), .correlationDelete(let subject, _, _): subject
        case .routes(let subject, _, _): subject
        }
    }

    /// The quantity type identifier, as sent.
    public var type: String {
        switch self {
        case .insert(let batch, _): batch.typeIdentifier
        case .delete(_, let type, _), .sourcePriority(_, let type, _): type
        case .workouts, .workoutDelete: WorkoutType.identifier
        case .characteristics: ProfileType.characteristics.identifier
        case .activitySummaries: ProfileType.activitySummary.identifier
        case .correlations, .correlationDelete: Correlation.storageType
        case .routes: WorkoutRoute.storageType
        }
    }

    /// The payload of an insert record whose batch is already encoded (the bytes that arrived, which decode to
    /// `batch`): the same bytes as ``encodePayload()`` gives for a canonical encoding, without encoding again.
    public static func insertPayload(_ batch: SampleBatch, writer: UInt32, encodedBatch: ArraySlice<UInt8>) -> [UInt8] {
        var w = ByteWriter(
            capacity: 32 + batch.subject.utf8.count + batch.typeIdentifier.utf8.count + encodedBatch.count)
        w.writeString(batch.subject)
        w.writeString(batch.typeIdentifier)
        if writer != 0 { w.writeVarint(UInt64(writer)) }
        w.write(bytes: encodedBatch)
        return w.bytes
    }

    /// The record payload: subject, type, then the kind's body.
    public func encodePayload() throws -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.writeString(subject)
        w.writeString(type)
        switch self {
        case .insert(let batch, let writer):
            if writer != 0 { w.writeVarint(UInt64(writer)) }
            try SampleBatchCodec.encode(batch, into: &w)
        case .delete(_, _, let filter):
            w.writeFilter(filter, carryingWriter: true)
        case .sourcePriority(_, _, let order):
            w.writeSources(order)
        case .workouts(_, let workouts, let writer):
            w.writeVarint(UInt64(writer))
            w.writeVarint(UInt64(workouts.count))
            for workout in workouts { w.writeWorkout(workout) }
        case .correlations(_, let correlations, let writer):
            w.writeVarint(UInt64(writer))
            w.writeList(correlations) { $0.writeCorrelation($1) }
        case .routes(_, let routes, let writer):
            w.writeVarint(UInt64(writer))
            w.writeList(routes) { $0.writeRoute($1) }
        case .workoutDelete(_, let uuids, let writer), .correlationDelete(_, let uuids, let writer):
            w.writeBool(writer != nil)
            if let writer { w.writeVarint(UInt64(writer)) }
            w.writeUUIDs(uuids)
        case .characteristics(_, let entries):
            w.writeCharacteristics(entries)
        case .activitySummaries(_, let summaries):
            w.writeActivitySummaries(summaries)
        }
        return w.bytes
    }

    /// Decodes a payload of record kind `kind`; throws ``CodecError`` for anything malformed.
    public static func decode(kind: UInt8, payload: [UInt8]) throws -> LogChange {
        try decode(kind: kind, from: ByteReader(payload))
    }

    /// Decodes the payload `r` reads (to its end index), of record kind `kind`; throws ``CodecError`` for anything
    /// malformed.
    public static func decode(kind: UInt8, from reader: ByteReader) throws -> LogChange {
        var r = reader
        let subject = try r.readString(limit: SampleRules.maxSubjectLength)
        let type = try r.readString(limit: 256)
        let change: LogChange
        guard let recordKind = LogRecordKind(rawValue: kind) else {
            throw CodecError(.malformedPayload, "unknown record kind \(kind)")
        }
        switch recordKind {
        case .insert, .insertByIdentity:
            let writer = recordKind == .insertByIdentity ? try readWriter(&r) : 0
            let batch = try SampleBatchCodec.decode(from: &r, limits: recordBatchLimits)
            guard batch.subject == subject, batch.typeIdentifier == type else {
                throw CodecError(
                    .malformedPayload,
                    "insert record names \(subject)/\(type) but holds \(batch.subject)/\(batch.typeIdentifier)")
            }
            change = .insert(batch, writer: writer)
        case .delete:
            let filter = try r.readFilter(FieldCaps.storage, carryingWriter: true)
            change = .delete(subject: subject, type: type, filter: filter)
        case .sourcePriority:
            change = .sourcePriority(subject: subject, type: type, order: try r.readSources(FieldCaps.storage))
        case .workouts:
            guard type == WorkoutType.identifier else {
                throw CodecError(.malformedPayload, "workout record names type \(type)")
            }
            let writer = try r.readVarint()
            guard let writer = UInt32(exactly: writer) else {
                throw CodecError(.malformedPayload, "writer id \(writer) is out of range")
            }
            let count = try r.readListCount("workout", limits: FieldCaps.storage, minBytes: ByteReader.minWorkoutBytes)
            var workouts: [Workout] = []
            workouts.reserveCapacity(count)
            for _ in 0..<count { workouts.append(try r.readWorkout(FieldCaps.storage)) }
            change = .workouts(subject: subject, workouts, writer: writer)
        case .workoutDelete:
            guard type == WorkoutType.identifier else {
                throw CodecError(.malformedPayload, "workout delete record names type \(type)")
            }
            let writer = try r.readBool() ? try readWriter(&r) : nil
            change = .workoutDelete(subject: subject, uuids: try r.readUUIDs(FieldCaps.storage), writer: writer)
        case .characteristics:
            try expect(type, ProfileType.characteristics)
            change = .characteristics(subject: subject, try r.readCharacteristics())
        case .activitySummaries:
            try expect(type, ProfileType.activitySummary)
            change = .activitySummaries(subject: subject, try r.readActivitySummaries())
        case .correlations, .correlationDelete:
            change = try decodeCorrelationChange(recordKind, subject: subject, type: type, &r)
        case .routes:
            change = try decodeRoutes(subject: subject, type: type, &r)
        }
        try r.expectEnd("the \(recordKind) record")
        return change
    }

    /// Throws unless a record of a profile type names `expected` as its type.
    private static func expect(_ type: String, _ expected: ProfileType) throws {
        guard type == expected.identifier else {
            throw CodecError(.malformedPayload, "\(expected.identifier) record names type \(type)")
        }
    }

    /// The subject, type and row count of an insert record, read from the headers alone (`nil` for other kinds or
    /// a header that does not decode: replay reports those).
    public static func insertShape(kind: UInt8, from reader: ByteReader) -> (subject: String, type: String, rows: Int)?
    {
        guard let recordKind = LogRecordKind(rawValue: kind), recordKind == .insert || recordKind == .insertByIdentity
        else { return nil }
        var r = reader
        guard let subject = try? r.readString(limit: SampleRules.maxSubjectLength),
            let type = try? r.readString(limit: 256),
            recordKind == .insert || (try? readWriter(&r)) != nil,
            let rows = try? SampleBatchCodec.rowCount(from: &r, limits: recordBatchLimits)
        else { return nil }
        return (subject, type, rows)
    }

    /// The limits a logged batch is decoded with (the server checked tighter ones before logging it).
    static let recordBatchLimits = BatchLimits(maxRows: 1 << 24, maxSources: Int(UInt16.max) + 1)

    /// The writer id of a kind 4 record: a varint that fits in 32 bits and is not 0.
    static func readWriter(_ r: inout ByteReader) throws -> UInt32 {
        let value = try r.readVarint()
        guard value != 0, let writer = UInt32(exactly: value) else {
            throw CodecError(.malformedPayload, "writer id \(value) is out of range")
        }
        return writer
    }
}
