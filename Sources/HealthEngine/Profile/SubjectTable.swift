import HealthModel

/// A small table per subject, behind one reader-writer lock: at most one value per key (the characteristics by
/// key, the activity summaries by day; HEALTHKIT.md §13). Setting a key replaces its value; setting it to `nil`
/// clears it. There are no anchors or deletion records: the table is read whole or by a key range.
///
/// Thread-safe. ``apply(subject:_:beforeApplying:)`` runs its hook under the write lock once it knows something
/// changes (the write-ahead log appends its record there), as ``HealthStore``'s changes do. Callers validate
/// the values first (``HealthStore/setCharacteristics(subject:_:beforeApplying:)``).
public final class SubjectTable<Key: Hashable & Comparable & Sendable, Value: Hashable & Sendable>: Sendable {
    /// Every subject's entries, for a snapshot and back.
    public typealias Image = [String: [Key: Value]]

    private let state = ReadWriteLocked(Image())

    /// An empty table.
    public init() {}

    /// Sets (a value) or clears (`nil`) each key of `changes` for `subject`, in order; returns how many keys
    /// changed (set to another value, or cleared while set). `beforeApplying` runs only when one changes.
    @discardableResult
    public func apply(
        subject: String, _ changes: [(key: Key, value: Value?)], beforeApplying: () throws -> Void = {}
    ) rethrows -> Int {
        try state.write { image in
            var entries = image[subject] ?? [:]
            var changed: Set<Key> = []
            let before = entries
            for (key, value) in changes {
                if let value { entries[key] = value } else { entries.removeValue(forKey: key) }
                if entries[key] != before[key] { changed.insert(key) } else { changed.remove(key) }
            }
            guard !changed.isEmpty else { return 0 }
            try beforeApplying()
            image[subject] = entries.isEmpty ? nil : entries
            return changed.count
        }
    }

    /// `subject`'s entries by key, only those in `range` when it is given; none for an unknown subject.
    public func entries(subject: String, in range: ClosedRange<Key>? = nil) -> [(key: Key, value: Value)] {
        state.read { image in
            guard let entries = image[subject] else { return [] }
            let chosen = range.map { range in entries.filter { range.contains($0.key) } } ?? entries
            return chosen.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
        }
    }

    /// Entries held, over every subject.
    public var count: Int { state.read { $0.values.reduce(0) { $0 + $1.count } } }

    /// A copy of everything (only the subjects `subjects` accepts: a cluster partition's), with the value of
    /// `sequence` taken under the read lock (the log's last sequence: every record of the table up to it is in
    /// the image, none after).
    public func image(subjects: (String) -> Bool = { _ in true }, sequence: () -> UInt64) -> (Image, UInt64) {
        state.read { image in (image.filter { subjects($0.key) }, sequence()) }
    }

    /// Replaces everything with `image` (start-up, before any change), or with `replacing`, only the subjects it
    /// accepts (a cluster partition's); subjects without entries are dropped.
    public func restore(_ image: Image, replacing subjects: ((String) -> Bool)? = nil) {
        let kept = image.filter { !$0.value.isEmpty }
        state.write { table in
            guard let subjects else {
                table = kept
                return
            }
            table = table.filter { !subjects($0.key) }.merging(kept) { _, new in new }
        }
    }
}
