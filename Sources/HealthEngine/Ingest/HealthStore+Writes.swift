import Foundation
import HealthModel

extension HealthStore {
    /// Called under the shard's write lock once every check has passed and just before a change is applied; a
    /// throw cancels the change, leaving the store as it was. The write-ahead log appends its record here, so
    /// records of one type are logged in exactly the order they are applied. Must not call back into the store.
    public typealias ChangeHook = () throws -> Void
    /// A ``ChangeHook`` that returns the sequence its log gave the change's record, from which a store whose
    /// anchors derive from sequences (``init(anchorsFromSequences:)``) derives the change's anchors.
    public typealias SequencedChangeHook = () throws -> UInt64

    /// Validates a batch (see ``insert(_:)``) and adds the rows that are new, all or none.
    ///
    /// Retries are safe: a batch id the series applied recently repeats its first result; a row whose UUID is
    /// stored with the same content counts as a duplicate, with other content the batch fails with
    /// ``ErrorCode/uuidConflict``; a sync identifier with a higher version replaces the sample holding it (whose
    /// UUID is deleted), an equal or lower one is a duplicate (HEALTHKIT.md §3). `hook` runs only when the
    /// batch changes something.
    /// Every added row is marked as written by `writer` (a client identity's numeric id; 0: unknown), which
    /// ``SampleFilter/writer`` selects on.
    public func insert(_ batch: SampleBatch, writer: UInt32 = 0, beforeApplying hook: ChangeHook) throws -> InsertResult
    {
        try insert(batch, writer: writer) { () throws -> UInt64? in
            try hook()
            return nil
        }
    }

    /// ``insert(_:writer:beforeApplying:)`` whose hook returns the sequence of the change's log record (see
    /// ``init(anchorsFromSequences:)``).
    public func insert(_ batch: SampleBatch, writer: UInt32 = 0, sequencedBy hook: SequencedChangeHook) throws
        -> InsertResult
    {
        try insert(batch, writer: writer) { () throws -> UInt64? in try hook() }
    }

    private func insert(_ batch: SampleBatch, writer: UInt32, hook: () throws -> UInt64?) throws -> InsertResult {
        let prepared = try PreparedBatch(batch, writer: writer)
        let outcome = try shard(prepared.type).write { state in
            let plan = try state.plan(prepared)
            let sequence = plan.changesNothing ? nil : try hook()
            state.change(of: prepared.subject, sequence: sequence) { $0.apply(plan, of: prepared) }
            return plan.outcome
        }
        return InsertResult(inserted: outcome.inserted, duplicates: outcome.duplicates)
    }

    /// Announces `rows` more samples for one subject's series of a type (recovery calls it with the rows each log
    /// segment holds): the series is created when `rows > 0`. Rows are sealed into blocks as they arrive, so there
    /// is no column to size in advance; an unknown type or invalid subject is ignored (replay reports those).
    public func reserve(subject: String, type: QuantityType, rows: Int) {
        guard rows > 0, (try? SampleRules.validate(subject: subject)) != nil else { return }
        shard(type).write { state in
            if state.series[subject] == nil { state.series[subject] = Series(type: type, blockRows: state.blockRows) }
        }
    }

    /// Deletes one subject's samples of a type matching `filter` (dates, sources, UUIDs); returns how many.
    /// `hook` runs only when at least one sample matches. Deleted UUIDs may be inserted again later.
    public func delete(
        subject: String, type: QuantityType, filter: SampleFilter, beforeApplying hook: ChangeHook = {}
    ) throws -> Int {
        try delete(subject: subject, type: type, filter: filter) { () throws -> UInt64? in
            try hook()
            return nil
        }
    }

    /// ``delete(subject:type:filter:beforeApplying:)`` whose hook returns the sequence of the change's log
    /// record (see ``init(anchorsFromSequences:)``).
    public func delete(
        subject: String, type: QuantityType, filter: SampleFilter, sequencedBy hook: SequencedChangeHook
    ) throws -> Int {
        try delete(subject: subject, type: type, filter: filter) { () throws -> UInt64? in try hook() }
    }

    private func delete(
        subject: String, type: QuantityType, filter: SampleFilter, hook: () throws -> UInt64?
    ) throws -> Int {
        try SampleRules.validate(subject: subject)
        let filter = try filter.validated(for: type)
        return try shard(type).write { state in
            guard let series = state.series[subject] else { return 0 }
            let rows = Array(series.select(filter).rows)
            if rows.isEmpty { return 0 }
            let sequence = try hook()
            state.change(of: subject, sequence: sequence) { $0.series[subject]!.removeRows(rows, clock: &$0.clock) }
            return rows.count
        }
    }

    /// Sets the priority of sources (see ``setSourcePriority(subject:type:order:)``); `hook` runs before it
    /// changes.
    public func setSourcePriority(
        subject: String, type: QuantityType, order: [SourceInfo], beforeApplying hook: ChangeHook
    ) throws {
        try SampleRules.validate(subject: subject)
        if order.count > SeriesSources.capacity {
            throw HealthError(.invalidArgument, "a priority order lists at most \(SeriesSources.capacity) sources")
        }
        try shard(type).write { state in
            try hook()
            state.series[subject, default: Series(type: type, blockRows: state.blockRows)].sources.setPriority(order)
        }
    }
}
