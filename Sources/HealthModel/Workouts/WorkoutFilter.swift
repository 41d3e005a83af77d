import Foundation

/// Which workouts a query wants (HEALTHKIT.md §13).
public struct WorkoutFilter: Hashable, Sendable {
    /// Activity types; empty matches every type.
    public var activityTypes: Set<WorkoutActivityType>
    /// Workouts starting at or after `start` (inclusive) and before `end` (exclusive); `nil` leaves the side open.
    public var start: Timestamp?
    public var end: Timestamp?
    /// `nil` matches every UUID.
    public var uuids: Set<UUID>?
    /// Only workouts (and deletions) with a larger anchor: changes since an anchor. 0: everything.
    public var afterAnchor: UInt64
    /// Only workouts written by this identity (the read rule; set by the server's authorization).
    public var writer: UInt32?

    /// A filter; every workout by default.
    public init(
        activityTypes: Set<WorkoutActivityType> = [], start: Timestamp? = nil, end: Timestamp? = nil,
        uuids: Set<UUID>? = nil, afterAnchor: UInt64 = 0, writer: UInt32? = nil
    ) {
        self.activityTypes = activityTypes
        self.start = start
        self.end = end
        self.uuids = uuids
        self.afterAnchor = afterAnchor
        self.writer = writer
    }

    /// Whether `workout`, stored with `anchor` by `writer`, passes.
    public func matches(_ workout: Workout, anchor: UInt64, writer: UInt32) -> Bool {
        if !activityTypes.isEmpty, !activityTypes.contains(workout.activityType) { return false }
        return ObjectSelection.matches(
            start: start, end: end, uuids: uuids, afterAnchor: afterAnchor, writer: self.writer,
            objectStart: workout.start, uuid: workout.uuid, anchor: anchor, objectWriter: writer)
    }
}

extension WorkoutFilter: CustomReflectable {
    /// The fields with the activity types sorted by raw value, so a printed filter (the golden vectors in
    /// Protocol/vectors) does not depend on the set's order.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "activityTypes": activityTypes.sorted { $0.rawValue < $1.rawValue }, "start": start as Any,
                "end": end as Any, "uuids": uuids.map { $0.sorted { $0.uuidString < $1.uuidString } } as Any,
                "afterAnchor": afterAnchor, "writer": writer as Any,
            ], displayStyle: .struct)
    }
}
