import Foundation
import HealthModel
import Synchronization

/// The in-memory sample store: one shard per quantity type, each behind its own reader-writer lock.
///
/// Thread-safe: every method may be called from any thread at the same time. Queries on a type share its
/// shard's read lock; an insert holds its type's write lock only while it merges already validated rows, and
/// never blocks other types. Methods do no I/O of their own and do not block otherwise; the one exception is a
/// change's `beforeApplying` hook (the write-ahead log appends its record there), which runs under the type's
/// write lock so that records are logged in the order they are applied.
public final class HealthStore: Sendable {
    private let shards: [ReadWriteLocked<ShardState>]
    private let retentionMicros = Atomic<Int64>(7 * 86_400 * 1_000_000)
    /// The workouts (HEALTHKIT.md §13): a store of their own, apart from the quantity shards.
    public let workouts: WorkoutStore
    /// The characteristics of each subject (HEALTHKIT.md §13), by key in short form.
    public let characteristicTable = SubjectTable<CharacteristicKey, String>()
    /// Apple's activity summaries of each subject (HEALTHKIT.md §13), by day number.
    public let activitySummaryTable = SubjectTable<Int, ActivitySummary>()
    /// The correlations (HEALTHKIT.md §13): objects naming member samples the shards hold.
    public let correlations: CorrelationStore
    /// The workouts' routes (HEALTHKIT.md §13): their points, tied to workouts by UUID.
    public let routes: RouteStore

    /// How long deletion records are kept for changes queries, in microseconds (default 7 days). Anchors older
    /// than a deletion past it get ``ErrorCode/anchorExpired``. Any thread may read or set it.
    public var deletionRetention: Timestamp {
        get { retentionMicros.load(ordering: .relaxed) }
        set { retentionMicros.store(max(0, newValue), ordering: .relaxed) }
    }

    /// An empty store. With `anchorsFromSequences` (cluster mode, where each partition has a log of its own)
    /// a change's anchors derive from its record's sequence instead of a counter per type, so that every node
    /// replaying a partition's log hands out the same anchors whatever else it holds: the change logged at
    /// sequence `s` takes anchors `s << 32 + 1`, `s << 32 + 2`, …, and the newest anchor a changes query answers
    /// is its subject's own (Protocol/STORAGE.md, *Cluster mode*); the same for workouts, correlations and
    /// routes. The sequence comes from the hooks of the `sequencedBy` entry points (``insert(_:writer:sequencedBy:)``,
    /// ``delete(subject:type:filter:sequencedBy:)`` and the object stores'), which a store counting anchors per
    /// type takes too and ignores.
    public init(anchorsFromSequences: Bool = false) {
        workouts = WorkoutStore(anchorsFromSequences: anchorsFromSequences)
        correlations = CorrelationStore(anchorsFromSequences: anchorsFromSequences)
        routes = RouteStore(anchorsFromSequences: anchorsFromSequences)
        shards = QuantityType.all.map { _ in
            var state = ShardState()
            if anchorsFromSequences { state.subjectAnchors = SubjectAnchors() }
            return ReadWriteLocked(state)
        }
    }

    /// A store whose new series seal blocks of `blockRows` rows (tests: small blocks put every code path that
    /// crosses blocks to work on little data; a size above the data keeps every row in the plain head).
    init(blockRows: Int) {
        (workouts, correlations, routes) = (WorkoutStore(), CorrelationStore(), RouteStore())
        shards = QuantityType.all.map { _ in ReadWriteLocked(ShardState(blockRows: blockRows)) }
    }

    func shard(_ type: QuantityType) -> ReadWriteLocked<ShardState> { shards[type.index] }

    /// Runs `body` on a type's shard under its read lock (for queries defined in other files).
    func read<Result>(_ type: QuantityType, _ body: (borrowing ShardState) throws -> Result) rethrows -> Result {
        try shard(type).read(body)
    }

    // MARK: Ingest

    /// Validates a batch and adds all of its rows, or none.
    ///
    /// Resolves the type (``ErrorCode/unknownQuantityType``), parses the unit (``ErrorCode/invalidUnit``,
    /// ``ErrorCode/incompatibleUnit``), checks the shape (``ErrorCode/malformedPayload``) and every row with
    /// ``SampleRules`` (``ErrorCode/invalidSample`` naming batch and row); late and out-of-order rows are merged
    /// into start order. Validation runs before the shard's write lock is taken. Retries are safe: see
    /// ``insert(_:beforeApplying:)``.
    public func insert(_ batch: SampleBatch) throws -> InsertResult {
        try insert(batch, beforeApplying: {})
    }

    // MARK: Queries

    /// The samples of one subject and type matching `filter` (HEALTHKIT.md §4), sorted, at most `limit` rows
    /// (0: no limit), values in `unit` (`nil`: the type's canonical unit). An unknown subject has no samples.
    ///
    /// Pages: with `after`, only the rows after that position of the order (a previous page's
    /// ``SampleQueryResult/next``); the result's `next` is set when the limit left rows out. Paging so sees every
    /// row that existed when it began exactly once, whatever is inserted meanwhile (a row inserted behind the
    /// position is not seen); a row deleted meanwhile is not seen. A position of another sort is
    /// ``ErrorCode/invalidArgument``.
    public func samples(
        subject: String, type: QuantityType, filter: SampleFilter = .all, sort: SampleSort = .startAscending,
        limit: Int = 0, after: SamplePosition? = nil, unit: HealthUnit? = nil
    ) throws -> SampleQueryResult {
        let transform = try UnitTransform(type: type, unit: unit)
        try SampleRules.validate(subject: subject)
        let filter = try filter.validated(for: type)
        if limit < 0 { throw HealthError(.invalidArgument, "the limit \(limit) is negative") }
        try after?.check(continuing: sort)
        return shard(type).read { state in
            guard let series = state.series[subject] else {
                return SampleQueryResult(
                    type: type, unit: transform.unit, sources: [], starts: [], ends: [], values: [],
                    sourceIndices: [], uuids: [])
            }
            let page = series.orderedRows(series.select(filter), sort: sort, limit: limit, after: after)
            let rows = series.decodedRows(page.rows)
            var result = series.queryResult(decoded: rows, type: type, unit: transform)
            if page.cut { result.next = series.position(of: rows.count - 1, in: rows, sort: sort) }
            return result
        }
    }

    /// Statistics of one subject's samples of a type matching `filter` (HEALTHKIT.md §5, sums merged across
    /// sources as in §8), figures in `unit` (`nil`: canonical; durations always in microseconds).
    ///
    /// Throws ``ErrorCode/invalidOptions`` for options that do not fit the type and ``ErrorCode/noData`` when
    /// no sample matches.
    public func statistics(
        subject: String, type: QuantityType, filter: SampleFilter = .all, options: StatisticsOptions,
        unit: HealthUnit? = nil
    ) throws -> Statistics {
        try options.validate(for: type)
        let transform = try UnitTransform(type: type, unit: unit)
        try SampleRules.validate(subject: subject)
        let filter = try filter.validated(for: type)
        return try shard(type).read { state in
            guard let series = state.series[subject] else { throw noData(subject: subject, type: type) }
            let selection = series.select(filter)
            if selection.isEmpty { throw noData(subject: subject, type: type) }
            return series.statistics(
                of: selection, options: options, style: type.style, unit: transform,
                envelope: type.categoryValues?.envelope)
        }
    }

    private func noData(subject: String, type: QuantityType) -> HealthError {
        HealthError(.noData, "no \(type) sample of subject \"\(subject)\" matches the query")
    }

    // MARK: Source priority

    /// Sets the priority of sources for one subject and type, highest first (HEALTHKIT.md §8). Sources are
    /// matched by bundle identifier (by name when it has none); sources not listed rank after, in default order.
    public func setSourcePriority(subject: String, type: QuantityType, order: [SourceInfo]) throws {
        try setSourcePriority(subject: subject, type: type, order: order, beforeApplying: {})
    }

    /// The effective source priority for one subject and type, highest first: the order set (sources without
    /// samples included), then every other source that wrote samples, in default order.
    public func sourcePriority(subject: String, type: QuantityType) throws -> [SourceInfo] {
        try SampleRules.validate(subject: subject)
        return shard(type).read { state in state.series[subject]?.sources.priorityList() ?? [] }
    }

    // MARK: Info

    /// Sample counts per type, distinct subjects and approximate memory, taking each shard's read lock in turn.
    public func info() -> StoreInfo {
        var samplesByType: [String: Int] = [:]
        var subjects = Set<String>()
        var memory = StoreMemory()
        for type in QuantityType.all {
            shard(type).read { state in
                var count = 0
                memory.series +=
                    state.series.capacity * (MemoryLayout<String>.stride + MemoryLayout<Series>.stride + 1)
                for (subject, series) in state.series {
                    count += series.count
                    series.addMemory(to: &memory)
                    memory.series += subject.utf8.count > 15 ? subject.utf8.count + 32 : 0
                    if series.count > 0 { subjects.insert(subject) }
                }
                if count > 0 { samplesByType[type.identifier] = count }
            }
        }
        return StoreInfo(samplesByType: samplesByType, subjects: subjects.count, memory: memory)
    }
}

/// The samples of one quantity type: a series per subject.
struct ShardState: Sendable {
    var series: [String: Series] = [:]
    /// Rows per sealed block of the series this shard creates.
    var blockRows = 4096
    /// Change anchors of this type (see ``ChangeClock``).
    var clock = ChangeClock()
    /// With anchors derived from log sequences (``HealthStore/init(anchorsFromSequences:)``): the newest anchor
    /// of each subject; `nil` when anchors come from the clock alone.
    var subjectAnchors: SubjectAnchors?

    /// The newest anchor a changes query about `subject` may answer: the type's (the clock's), or with anchors
    /// derived from sequences the subject's own.
    func lastAnchor(of subject: String) -> UInt64 {
        subjectAnchors?.last(of: subject) ?? clock.lastAnchor
    }

    /// Runs a change of `subject` logged at `sequence` (see ``SubjectAnchors/change(of:sequence:in:anchors:counter:_:)``).
    mutating func change<R>(of subject: String, sequence: UInt64?, _ body: (inout ShardState) throws -> R) rethrows
        -> R
    {
        try SubjectAnchors.change(
            of: subject, sequence: sequence, in: &self, anchors: \.subjectAnchors, counter: \.clock.lastAnchor, body)
    }

    /// Plans a prepared batch against its subject's series (see ``InsertPlan``), checking first that the source
    /// table has room; changes nothing.
    func plan(_ batch: PreparedBatch) throws -> InsertPlan {
        let existing = series[batch.subject]
        let known = existing?.sources
        let newSources = known?.newSourceCount(batch.sourcesInUse) ?? Set(batch.sourcesInUse).count
        if (known?.count ?? 0) + newSources > SeriesSources.capacity {
            throw HealthError(
                .invalidArgument,
                "batch \(batch.batchID): subject \"\(batch.subject)\" would have more than \(SeriesSources.capacity) "
                    + "sources of \(batch.type)")
        }
        return try InsertPlan(batch, against: existing)
    }

    /// Applies a plan made by ``plan(_:)`` with no change in between.
    mutating func apply(_ plan: InsertPlan, of batch: PreparedBatch) {
        guard !plan.changesNothing else { return }
        series[batch.subject, default: Series(type: batch.type, blockRows: blockRows)].apply(
            plan, of: batch, clock: &clock)
    }
}
