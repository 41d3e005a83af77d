import Foundation
import HealthModel

/// A workout as stored: the workout, the change anchor it arrived with, and the identity that wrote it.
public struct StoredWorkout: Hashable, Sendable {
    public var workout: Workout
    /// The change anchor of its insert (``WorkoutStore`` counts its own anchors, apart from the quantity types').
    public var anchor: UInt64
    /// The client identity that wrote it (0: unknown).
    public var writer: UInt32

    /// A stored workout from its parts.
    public init(workout: Workout, anchor: UInt64, writer: UInt32) {
        self.workout = workout
        self.anchor = anchor
        self.writer = writer
    }
}

/// A deleted workout, for changes since an anchor.
public struct WorkoutDeletion: Hashable, Sendable {
    public var uuid: UUID
    /// The anchor the deletion took.
    public var anchor: UInt64
    /// The writer of the deleted workout (the read rule reports only an identity's own deletions).
    public var writer: UInt32

    /// A deletion from its parts.
    public init(uuid: UUID, anchor: UInt64, writer: UInt32) {
        self.uuid = uuid
        self.anchor = anchor
        self.writer = writer
    }
}

/// What a workout query found: matching workouts by start (then UUID), the deletions after the filter's anchor,
/// and the newest anchor handed out.
public struct WorkoutQueryResult: Hashable, Sendable {
    public var workouts: [StoredWorkout]
    public var deletions: [WorkoutDeletion]
    public var lastAnchor: UInt64

    /// A result from its parts.
    public init(workouts: [StoredWorkout], deletions: [WorkoutDeletion], lastAnchor: UInt64) {
        self.workouts = workouts
        self.deletions = deletions
        self.lastAnchor = lastAnchor
    }
}

/// Everything the workout store holds, for a snapshot and back (Protocol/STORAGE.md, "Workout snapshot").
public struct WorkoutImage: Hashable, Sendable {
    public var lastAnchor: UInt64
    /// Per subject, its workouts (any order) and its deletion records.
    public var subjects: [String: (workouts: [StoredWorkout], deletions: [WorkoutDeletion])]

    /// An image from its parts.
    public init(lastAnchor: UInt64, subjects: [String: (workouts: [StoredWorkout], deletions: [WorkoutDeletion])]) {
        self.lastAnchor = lastAnchor
        self.subjects = subjects
    }

    /// Workouts in the image.
    public var workoutCount: Int { subjects.values.reduce(0) { $0 + $1.workouts.count } }

    public static func == (a: WorkoutImage, b: WorkoutImage) -> Bool {
        a.lastAnchor == b.lastAnchor && a.subjects.keys == b.subjects.keys
            && a.subjects.allSatisfy { subject, entry in
                let other = b.subjects[subject]!
                return Set(entry.workouts) == Set(other.workouts) && entry.deletions == other.deletions
            }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(lastAnchor)
        hasher.combine(subjects.count)
    }
}

/// The workouts of every subject (HEALTHKIT.md §13), behind one reader-writer lock. Few and large compared with
/// samples, so they live apart from the columnar series: a dictionary by UUID per subject.
///
/// Thread-safe. Changes take a `beforeApplying` hook that runs under the write lock once every check has passed
/// (the write-ahead log appends its record there), as ``HealthStore``'s changes do.
public final class WorkoutStore: Sendable {
    private struct Book: Sendable {
        var byUUID: [UUID: StoredWorkout] = [:]
        var deletions: [WorkoutDeletion] = []
    }

    private struct State: Sendable {
        var lastAnchor: UInt64 = 0
        var books: [String: Book] = [:]
    }

    private let state = ReadWriteLocked(State())

    /// An empty store.
    public init() {}

    /// Adds `workouts` for `subject`, written by `writer`: all or none. A UUID already stored with the same
    /// content is a duplicate; with other content the whole call is refused (``ErrorCode/uuidConflict``).
    /// Every workout is checked first (``Workout/validate()``). `beforeApplying` runs only when something is new.
    /// Returns how many were new and how many duplicates.
    @discardableResult
    public func insert(
        subject: String, _ workouts: [Workout], writer: UInt32 = 0, beforeApplying: () throws -> Void = {}
    ) throws -> (inserted: Int, duplicates: Int) {
        try SampleRules.validate(subject: subject)
        for workout in workouts { try workout.validate() }
        return try state.write { state in
            let book = state.books[subject] ?? Book()
            var fresh: [Workout] = []
            var seen: [UUID: Workout] = [:]
            for workout in workouts {
                if let stored = book.byUUID[workout.uuid]?.workout ?? seen[workout.uuid] {
                    guard stored == workout else {
                        throw HealthError(
                            .uuidConflict,
                            "workout \(workout.uuid) is stored with other content (\(stored.activityType) at \(stored.start))"
                        )
                    }
                    continue
                }
                seen[workout.uuid] = workout
                fresh.append(workout)
            }
            guard !fresh.isEmpty else { return (0, workouts.count) }
            try beforeApplying()
            var changed = book
            for workout in fresh {
                state.lastAnchor += 1
                changed.byUUID[workout.uuid] = StoredWorkout(workout: workout, anchor: state.lastAnchor, writer: writer)
            }
            state.books[subject] = changed
            return (fresh.count, workouts.count - fresh.count)
        }
    }

    /// Deletes `subject`'s workouts with these UUIDs (only `writer`'s when it is set); returns how many.
    /// `beforeApplying` runs only when one matches.
    @discardableResult
    public func delete(
        subject: String, uuids: Set<UUID>, writer: UInt32? = nil, beforeApplying: () throws -> Void = {}
    ) throws -> Int {
        try SampleRules.validate(subject: subject)
        return try state.write { state in
            guard var book = state.books[subject] else { return 0 }
            let doomed = uuids.sorted { $0.uuidString < $1.uuidString }.filter { uuid in
                guard let stored = book.byUUID[uuid] else { return false }
                return writer.map { $0 == stored.writer } ?? true
            }
            guard !doomed.isEmpty else { return 0 }
            try beforeApplying()
            for uuid in doomed {
                let stored = book.byUUID.removeValue(forKey: uuid)!
                state.lastAnchor += 1
                book.deletions.append(WorkoutDeletion(uuid: uuid, anchor: state.lastAnchor, writer: stored.writer))
            }
            state.books[subject] = book
            return doomed.count
        }
    }

    /// `subject`'s workouts matching `filter`, by start then UUID, at most `limit` (0: all); with the deletions
    /// after the filter's anchor (by the filter's writer, when set). An unknown subject has none.
    public func workouts(subject: String, filter: WorkoutFilter = WorkoutFilter(), limit: Int = 0) throws
        -> WorkoutQueryResult
    {
        try SampleRules.validate(subject: subject)
        if limit < 0 { throw HealthError(.invalidArgument, "the limit \(limit) is negative") }
        return state.read { state in
            guard let book = state.books[subject] else {
                return WorkoutQueryResult(workouts: [], deletions: [], lastAnchor: state.lastAnchor)
            }
            var found = book.byUUID.values.filter { filter.matches($0.workout, anchor: $0.anchor, writer: $0.writer) }
            found.sort {
                ($0.workout.start, $0.workout.uuid.uuidString) < ($1.workout.start, $1.workout.uuid.uuidString)
            }
            if limit > 0, found.count > limit { found.removeLast(found.count - limit) }
            let deletions =
                filter.afterAnchor == 0
                ? []
                : book.deletions.filter { deletion in
                    deletion.anchor > filter.afterAnchor && (filter.writer.map { $0 == deletion.writer } ?? true)
                }
            return WorkoutQueryResult(workouts: found, deletions: deletions, lastAnchor: state.lastAnchor)
        }
    }

    /// Workouts held, over every subject.
    public var count: Int { state.read { $0.books.values.reduce(0) { $0 + $1.byUUID.count } } }

    /// A copy of everything, with the value of `sequence` taken under the read lock (the log's last sequence:
    /// every workout record up to it is in the image, none after).
    public func image(sequence: () -> UInt64) -> (WorkoutImage, UInt64) {
        state.read { state in
            let subjects = state.books.mapValues { book in
                (workouts: Array(book.byUUID.values), deletions: book.deletions)
            }
            return (WorkoutImage(lastAnchor: state.lastAnchor, subjects: subjects), sequence())
        }
    }

    /// Replaces everything with `image` (start-up, before any change).
    public func restore(_ image: WorkoutImage) throws {
        var restored = State(lastAnchor: image.lastAnchor)
        for (subject, entry) in image.subjects {
            try SampleRules.validate(subject: subject)
            var book = Book(deletions: entry.deletions)
            for stored in entry.workouts {
                try stored.workout.validate()
                guard stored.anchor <= image.lastAnchor,
                    book.byUUID.updateValue(stored, forKey: stored.workout.uuid) == nil
                else {
                    throw HealthError(
                        .storageUnavailable, "workout \(stored.workout.uuid) of \(subject) is not consistent")
                }
            }
            restored.books[subject] = book
        }
        state.write { $0 = restored }
    }
}
