import Foundation
import HealthModel

/// A kind of object kept in an ``ObjectStore``: a workout or a correlation (HEALTHKIT.md §13). Objects are few and
/// large compared with samples, so they live apart from the columnar series, a dictionary by UUID per subject.
public protocol StorableObject: Hashable, Sendable {
    /// Which objects a query wants.
    associatedtype Filter: ObjectFilter where Filter.Object == Self
    /// What errors call one (`workout`).
    static var objectName: String { get }
    var uuid: UUID { get }
    /// The instant queries sort and select by.
    var start: Timestamp { get }
    /// A short description for a conflict message (its type and start).
    var conflictDescription: String { get }
    /// Throws ``ErrorCode/invalidSample`` when the object breaks a rule; checked on every insert and restore.
    func validate() throws
}

/// A filter of an ``ObjectStore`` query: which objects, and changes after which anchor, by which writer.
public protocol ObjectFilter: Hashable, Sendable {
    associatedtype Object
    /// Only objects (and deletions) with a larger anchor; 0: every object, no deletions.
    var afterAnchor: UInt64 { get }
    /// Only this identity's objects and deletions (the read rule); `nil`: everyone's.
    var writer: UInt32? { get }
    /// Whether `object`, stored with `anchor` by `writer`, passes.
    func matches(_ object: Object, anchor: UInt64, writer: UInt32) -> Bool
}

/// An object as stored: the object, the change anchor it arrived with, and the identity that wrote it.
public struct StoredObject<Object: StorableObject>: Hashable, Sendable {
    public var object: Object
    /// The change anchor of its insert (each ``ObjectStore`` counts its own anchors, apart from the types').
    public var anchor: UInt64
    /// The client identity that wrote it (0: unknown).
    public var writer: UInt32

    /// A stored object from its parts.
    public init(object: Object, anchor: UInt64, writer: UInt32) {
        self.object = object
        self.anchor = anchor
        self.writer = writer
    }
}

/// A deleted object, for changes since an anchor.
public struct ObjectDeletion: Hashable, Sendable {
    public var uuid: UUID
    /// The anchor the deletion took.
    public var anchor: UInt64
    /// The writer of the deleted object (the read rule reports only an identity's own deletions).
    public var writer: UInt32

    /// A deletion from its parts.
    public init(uuid: UUID, anchor: UInt64, writer: UInt32) {
        self.uuid = uuid
        self.anchor = anchor
        self.writer = writer
    }
}

/// What a query found: matching objects by start (then UUID), the deletions after the filter's anchor, and the
/// newest anchor handed out.
public struct ObjectQueryResult<Object: StorableObject>: Hashable, Sendable {
    public var objects: [StoredObject<Object>]
    public var deletions: [ObjectDeletion]
    public var lastAnchor: UInt64

    /// A result from its parts.
    public init(objects: [StoredObject<Object>], deletions: [ObjectDeletion], lastAnchor: UInt64) {
        self.objects = objects
        self.deletions = deletions
        self.lastAnchor = lastAnchor
    }
}

/// One subject's part of an ``ObjectImage``: its objects (any order) and its deletion records.
public struct ObjectBook<Object: StorableObject>: Hashable, Sendable {
    public var objects: [StoredObject<Object>]
    public var deletions: [ObjectDeletion]

    /// A book from its parts.
    public init(objects: [StoredObject<Object>], deletions: [ObjectDeletion]) {
        self.objects = objects
        self.deletions = deletions
    }

    public static func == (a: ObjectBook, b: ObjectBook) -> Bool {
        Set(a.objects) == Set(b.objects) && a.deletions == b.deletions
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(objects.count)
        hasher.combine(deletions)
    }
}

/// Everything an ``ObjectStore`` holds, for a snapshot and back (Protocol/STORAGE.md, "Workout snapshot",
/// "Correlation snapshot").
public struct ObjectImage<Object: StorableObject>: Hashable, Sendable {
    public var lastAnchor: UInt64
    /// Per subject, its objects and deletion records.
    public var subjects: [String: ObjectBook<Object>]

    /// An image from its parts.
    public init(lastAnchor: UInt64, subjects: [String: ObjectBook<Object>]) {
        self.lastAnchor = lastAnchor
        self.subjects = subjects
    }

    /// Objects in the image.
    public var objectCount: Int { subjects.values.reduce(0) { $0 + $1.objects.count } }
}

/// The objects of one kind for every subject, behind one reader-writer lock, with anchors and deletion records
/// of their own (HEALTHKIT.md §13): ``HealthStore/workouts`` and ``HealthStore/correlations``.
///
/// Thread-safe. Changes take a `beforeApplying` hook that runs under the write lock once every check has passed
/// (the write-ahead log appends its record there), as ``HealthStore``'s changes do.
public final class ObjectStore<Object: StorableObject>: Sendable {
    private struct Book: Sendable {
        var byUUID: [UUID: StoredObject<Object>] = [:]
        var deletions: [ObjectDeletion] = []
    }

    private struct State: Sendable {
        var lastAnchor: UInt64 = 0
        var books: [String: Book] = [:]
        /// With anchors derived from log sequences: the newest anchor of each subject; `nil` otherwise.
        var subjectAnchors: SubjectAnchors?

        /// The newest anchor a query about `subject` answers: the store's, or with anchors derived from
        /// sequences the subject's own.
        func lastAnchor(of subject: String) -> UInt64 { subjectAnchors?.last(of: subject) ?? lastAnchor }

        /// Runs a change of `subject` logged at `sequence`, as ``HealthStore``'s shards do.
        mutating func change<R>(of subject: String, sequence: UInt64?, _ body: (inout State) throws -> R) rethrows
            -> R
        {
            try SubjectAnchors.change(
                of: subject, sequence: sequence, in: &self, anchors: \.subjectAnchors, counter: \.lastAnchor, body)
        }
    }

    private let state: ReadWriteLocked<State>

    /// An empty store; with `anchorsFromSequences`, anchors derive from the sequences of the changes' log
    /// records (see ``HealthStore/init(anchorsFromSequences:)``; the `sequencedBy` entry points).
    public init(anchorsFromSequences: Bool = false) {
        state = ReadWriteLocked(State(subjectAnchors: anchorsFromSequences ? SubjectAnchors() : nil))
    }

    /// Adds `objects` for `subject`, written by `writer`: all or none. A UUID already stored with the same
    /// content is a duplicate; with other content the whole call is refused (``ErrorCode/uuidConflict``).
    /// Every object is checked first (``StorableObject/validate()``). `beforeApplying` runs only when something
    /// is new. Returns how many were new and how many duplicates.
    @discardableResult
    public func insert(
        subject: String, _ objects: [Object], writer: UInt32 = 0, beforeApplying: () throws -> Void = {}
    ) throws -> (inserted: Int, duplicates: Int) {
        try insert(subject: subject, objects, writer: writer) { () throws -> UInt64? in
            try beforeApplying()
            return nil
        }
    }

    /// ``insert(subject:_:writer:beforeApplying:)`` whose hook returns the sequence of the change's log record.
    @discardableResult
    public func insert(
        subject: String, _ objects: [Object], writer: UInt32 = 0, sequencedBy hook: () throws -> UInt64
    ) throws -> (inserted: Int, duplicates: Int) {
        try insert(subject: subject, objects, writer: writer) { () throws -> UInt64? in try hook() }
    }

    private func insert(
        subject: String, _ objects: [Object], writer: UInt32, hook: () throws -> UInt64?
    ) throws -> (inserted: Int, duplicates: Int) {
        try SampleRules.validate(subject: subject)
        for object in objects { try object.validate() }
        return try state.write { state in
            let book = state.books[subject] ?? Book()
            var fresh: [Object] = []
            var seen: [UUID: Object] = [:]
            for object in objects {
                if let stored = book.byUUID[object.uuid]?.object ?? seen[object.uuid] {
                    guard stored == object else {
                        throw HealthError(
                            .uuidConflict,
                            "\(Object.objectName) \(object.uuid) is stored with other content (\(stored.conflictDescription))"
                        )
                    }
                    continue
                }
                seen[object.uuid] = object
                fresh.append(object)
            }
            guard !fresh.isEmpty else { return (0, objects.count) }
            let sequence = try hook()
            state.change(of: subject, sequence: sequence) { state in
                var changed = book
                for object in fresh {
                    state.lastAnchor += 1
                    changed.byUUID[object.uuid] = StoredObject(
                        object: object, anchor: state.lastAnchor, writer: writer)
                }
                state.books[subject] = changed
            }
            return (fresh.count, objects.count - fresh.count)
        }
    }

    /// Deletes `subject`'s objects with these UUIDs (only `writer`'s when it is set); returns how many.
    /// `beforeApplying` runs only when one matches.
    @discardableResult
    public func delete(
        subject: String, uuids: Set<UUID>, writer: UInt32? = nil, beforeApplying: () throws -> Void = {}
    ) throws -> Int {
        try delete(subject: subject, uuids: uuids, writer: writer) { () throws -> UInt64? in
            try beforeApplying()
            return nil
        }
    }

    /// ``delete(subject:uuids:writer:beforeApplying:)`` whose hook returns the sequence of the change's log
    /// record.
    @discardableResult
    public func delete(
        subject: String, uuids: Set<UUID>, writer: UInt32? = nil, sequencedBy hook: () throws -> UInt64
    ) throws -> Int {
        try delete(subject: subject, uuids: uuids, writer: writer) { () throws -> UInt64? in try hook() }
    }

    private func delete(
        subject: String, uuids: Set<UUID>, writer: UInt32?, hook: () throws -> UInt64?
    ) throws -> Int {
        try SampleRules.validate(subject: subject)
        return try state.write { state in
            guard var book = state.books[subject] else { return 0 }
            let doomed = uuids.sorted { $0.uuidString < $1.uuidString }.filter { uuid in
                guard let stored = book.byUUID[uuid] else { return false }
                return writer.map { $0 == stored.writer } ?? true
            }
            guard !doomed.isEmpty else { return 0 }
            let sequence = try hook()
            state.change(of: subject, sequence: sequence) { state in
                for uuid in doomed {
                    let stored = book.byUUID.removeValue(forKey: uuid)!
                    state.lastAnchor += 1
                    book.deletions.append(ObjectDeletion(uuid: uuid, anchor: state.lastAnchor, writer: stored.writer))
                }
                state.books[subject] = book
            }
            return doomed.count
        }
    }

    /// `subject`'s objects matching `filter`, by start then UUID, at most `limit` (0: all); with the deletions
    /// after the filter's anchor (by the filter's writer, when set). An unknown subject has none.
    public func objects(subject: String, filter: Object.Filter, limit: Int = 0) throws -> ObjectQueryResult<Object> {
        try SampleRules.validate(subject: subject)
        if limit < 0 { throw HealthError(.invalidArgument, "the limit \(limit) is negative") }
        return state.read { state in
            guard let book = state.books[subject] else {
                return ObjectQueryResult(objects: [], deletions: [], lastAnchor: state.lastAnchor(of: subject))
            }
            var found = book.byUUID.values.filter { filter.matches($0.object, anchor: $0.anchor, writer: $0.writer) }
            found.sort { ($0.object.start, $0.object.uuid.uuidString) < ($1.object.start, $1.object.uuid.uuidString) }
            if limit > 0, found.count > limit { found.removeLast(found.count - limit) }
            let deletions =
                filter.afterAnchor == 0
                ? []
                : book.deletions.filter { deletion in
                    deletion.anchor > filter.afterAnchor && (filter.writer.map { $0 == deletion.writer } ?? true)
                }
            return ObjectQueryResult(objects: found, deletions: deletions, lastAnchor: state.lastAnchor(of: subject))
        }
    }

    /// Objects held, over every subject.
    public var count: Int { state.read { $0.books.values.reduce(0) { $0 + $1.byUUID.count } } }

    /// A copy of everything (only the subjects `subjects` accepts: a cluster partition's), with the value of
    /// `sequence` taken under the read lock (the log's last sequence: every record of this store up to it is in
    /// the image, none after).
    public func image(subjects: (String) -> Bool = { _ in true }, sequence: () -> UInt64) -> (
        ObjectImage<Object>, UInt64
    ) {
        state.read { state in
            let books = state.books.filter { subjects($0.key) }.mapValues { book in
                ObjectBook(objects: Array(book.byUUID.values), deletions: book.deletions)
            }
            // With anchors from sequences the counter holds the last change's anchors, not the newest of all.
            let lastAnchor = max(state.lastAnchor, state.subjectAnchors?.newestOfAll ?? 0)
            return (ObjectImage(lastAnchor: lastAnchor, subjects: books), sequence())
        }
    }

    /// Replaces everything with `image` (start-up, before any change), or with `replacing`, only the subjects
    /// it accepts (a cluster partition's: the others are kept). Throws ``ErrorCode/storageUnavailable`` naming
    /// an object that is not consistent; nothing changes then.
    public func restore(_ image: ObjectImage<Object>, replacing subjects: ((String) -> Bool)? = nil) throws {
        var books: [String: Book] = [:]
        var newest: [String: UInt64] = [:]
        for (subject, entry) in image.subjects {
            try SampleRules.validate(subject: subject)
            var book = Book(deletions: entry.deletions)
            for stored in entry.objects {
                try stored.object.validate()
                guard stored.anchor <= image.lastAnchor,
                    book.byUUID.updateValue(stored, forKey: stored.object.uuid) == nil
                else {
                    throw HealthError(
                        .storageUnavailable,
                        "\(Object.objectName) \(stored.object.uuid) of \(subject) is not consistent")
                }
            }
            books[subject] = book
            newest[subject] = max(
                entry.objects.map(\.anchor).max() ?? 0, entry.deletions.map(\.anchor).max() ?? 0)
        }
        state.write { state in
            guard let subjects else {
                state = State(lastAnchor: image.lastAnchor, books: books, subjectAnchors: state.subjectAnchors)
                state.subjectAnchors?.replace(newest, where: { _ in true })
                return
            }
            state.books = state.books.filter { !subjects($0.key) }.merging(books) { _, new in new }
            state.lastAnchor = max(state.lastAnchor, image.lastAnchor)
            state.subjectAnchors?.replace(newest, where: subjects)
        }
    }
}
