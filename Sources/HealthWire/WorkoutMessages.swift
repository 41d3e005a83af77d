import Foundation
import HealthCodec
import HealthModel

/// Adds workouts for one subject (HEALTHKIT.md §13); all or none. Answered by ``WorkoutInsertAck``.
public struct WorkoutInsert: WireMessage {
    public static let kind = MessageKind.workoutInsert
    /// At most this many workouts in one request.
    public static let maxWorkouts = 10_000
    public var subject: String
    public var workouts: [Workout]

    public init(subject: String, workouts: [Workout]) {
        self.subject = subject
        self.workouts = workouts
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeList(workouts) { $0.writeWorkout($1) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        workouts = try r.readList(
            "workout", limits: limits, minBytes: ByteReader.minWorkoutBytes, max: Self.maxWorkouts
        ) {
            try $0.readWorkout(limits)
        }
    }
}

/// How many workouts of a ``WorkoutInsert`` were new and how many were already stored.
public struct WorkoutInsertAck: WireMessage {
    public static let kind = MessageKind.workoutInsertAck
    public var inserted: UInt64
    public var duplicates: UInt64

    public init(inserted: UInt64, duplicates: UInt64) {
        self.inserted = inserted
        self.duplicates = duplicates
    }

    public func encode(into w: inout ByteWriter) {
        w.writeVarint(inserted)
        w.writeVarint(duplicates)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        inserted = try r.readVarint()
        duplicates = try r.readVarint()
    }
}

/// Asks for one subject's workouts matching a filter: activity types, a start range, UUIDs, changes after an
/// anchor. Answered by ``WorkoutResult``.
public struct WorkoutQuery: WireMessage {
    public static let kind = MessageKind.workoutQuery
    public var subject: String
    public var filter: WorkoutFilter
    /// At most this many workouts (0: the server's cap, ``WorkoutInsert/maxWorkouts``).
    public var limit: UInt64

    public init(subject: String, filter: WorkoutFilter = WorkoutFilter(), limit: UInt64 = 0) {
        self.subject = subject
        self.filter = filter
        self.limit = limit
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        let types = filter.activityTypes.map(\.rawValue).sorted()
        w.writeVarint(UInt64(types.count))
        for type in types { w.writeVarint(UInt64(type)) }
        w.writeObjectRange(start: filter.start, end: filter.end, uuids: filter.uuids)
        w.writeVarint(filter.afterAnchor)
        w.writeVarint(limit)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        let count = try r.readListCount("activity type", limits: limits)
        var types: Set<WorkoutActivityType> = []
        for _ in 0..<count {
            let raw = try r.readVarint()
            guard let type = UInt16(exactly: raw).flatMap(WorkoutActivityType.init(rawValue:)) else {
                throw CodecError(.malformedPayload, "unknown workout activity type \(raw) before byte \(r.offset)")
            }
            types.insert(type)
        }
        let range = try r.readObjectRange(limits)
        filter = WorkoutFilter(
            activityTypes: types, start: range.start, end: range.end, uuids: range.uuids,
            afterAnchor: try r.readVarint())
        limit = try r.readVarint()
    }
}

/// The workouts a ``WorkoutQuery`` found, by start, each with its change anchor; the UUIDs (with anchors)
/// deleted after the query's anchor; and the newest anchor handed out (the next query's `afterAnchor`).
public struct WorkoutResult: WireMessage {
    public static let kind = MessageKind.workoutResult
    public var lastAnchor: UInt64
    public var workouts: [(anchor: UInt64, workout: Workout)]
    public var deleted: [(anchor: UInt64, uuid: UUID)]

    public init(
        lastAnchor: UInt64, workouts: [(anchor: UInt64, workout: Workout)], deleted: [(anchor: UInt64, uuid: UUID)] = []
    ) {
        self.lastAnchor = lastAnchor
        self.workouts = workouts
        self.deleted = deleted
    }

    public func encode(into w: inout ByteWriter) {
        w.writeVarint(lastAnchor)
        w.writeVarint(UInt64(workouts.count))
        for (anchor, workout) in workouts {
            w.writeVarint(anchor)
            w.writeWorkout(workout)
        }
        w.writeDeletions(deleted)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        lastAnchor = try r.readVarint()
        let count = try r.readListCount("workout", limits: limits, minBytes: 31)
        guard count <= WorkoutInsert.maxWorkouts else {
            throw CodecError(.malformedPayload, "\(count) workouts in one result; at most \(WorkoutInsert.maxWorkouts)")
        }
        workouts = []
        workouts.reserveCapacity(count)
        for _ in 0..<count { workouts.append((try r.readVarint(), try r.readWorkout(limits))) }
        deleted = try r.readDeletions("deleted workout", limits: limits)
    }

    public static func == (a: WorkoutResult, b: WorkoutResult) -> Bool {
        a.lastAnchor == b.lastAnchor && a.workouts.map(\.anchor) == b.workouts.map(\.anchor)
            && a.workouts.map(\.workout) == b.workouts.map(\.workout)
            && a.deleted.map(\.anchor) == b.deleted.map(\.anchor)
            && a.deleted.map(\.uuid) == b.deleted.map(\.uuid)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(lastAnchor)
        hasher.combine(workouts.map(\.workout))
    }
}

/// Deletes one subject's workouts by UUID. Answered by ``DeleteAck`` with how many were deleted.
public struct WorkoutDelete: WireMessage {
    public static let kind = MessageKind.workoutDelete
    public var subject: String
    public var uuids: [UUID]
    /// Only this identity's workouts: set by the server's authorization, never on the wire.
    package var writer: UInt32?

    public init(subject: String, uuids: [UUID]) {
        self.subject = subject
        self.uuids = uuids
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeUUIDs(uuids)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        uuids = try r.readUUIDs(limits)
    }
}
