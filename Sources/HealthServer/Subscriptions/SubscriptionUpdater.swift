import HealthEngine
import HealthModel
import HealthWire

/// Computes what a subscription pushes, from the store and the anchor it has reached. Pure apart from reading
/// the store: no sockets, no threads; runs on worker threads. Thread-safe.
public enum SubscriptionUpdater {
    /// Most added plus deleted samples in one anchored update (a bigger backlog follows in further updates).
    public static let maxChangesPerUpdate = 4096
    /// Most buckets in one collection update.
    public static let maxBucketsPerUpdate = 10_000

    /// What a computation produced: updates to push (possibly none), the anchor reached, and whether more
    /// changes wait beyond it.
    public struct Step: Sendable {
        public var updates: [UpdateContent]
        public var anchor: UInt64
        public var more: Bool
    }

    /// The subject and type a request watches.
    public static func target(of request: SubscriptionRequest) -> (subject: String, type: String) {
        switch request {
        case .observer(let subject, let type, _): (subject, type)
        case .anchored(let query): (query.subject, query.type)
        case .collection(let query): (query.subject, query.type)
        }
    }

    /// Validates a subscription and computes its initial updates: none for an observer, the changes since the
    /// query's anchor for an anchored one, all buckets for a collection. Throws the query's errors.
    public static func start(_ request: SubscriptionRequest, store: HealthStore) throws -> Step {
        switch request {
        case .observer(let subject, let name, let filter):
            let type = try QuantityType.named(name)
            _ = try store.changes(subject: subject, type: type, filter: filter, anchor: 0, limit: 1)
            return Step(updates: [], anchor: store.lastAnchor(type: type, subject: subject), more: false)
        case .anchored(let query):
            let result = try changes(query, after: query.anchor, store: store)
            return Step(updates: [.changes(result)], anchor: result.anchor, more: result.hasMore)
        case .collection(let query):
            // The anchor first: a change racing the query is recomputed by the next step, never lost.
            let typed = try query.checked()
            let anchor = store.lastAnchor(type: typed.type, subject: query.subject)
            let buckets = try collection(typed, from: query.enumerateFrom, to: query.enumerateTo, store: store)
            let unit = try unitSymbol(query)
            var updates: [UpdateContent] = []
            var start = 0
            repeat {
                let end = min(buckets.count, start + maxBucketsPerUpdate)
                updates.append(.buckets(CollectionResult(unit: unit, buckets: Array(buckets[start..<end]))))
                start = end
            } while start < buckets.count
            return Step(updates: updates, anchor: anchor, more: false)
        }
    }

    /// The updates for the changes after `anchor` (none when nothing relevant changed).
    public static func next(_ request: SubscriptionRequest, after anchor: UInt64, store: HealthStore) throws -> Step {
        try next(request, after: anchor, store: store, cache: nil)
    }

    /// ``next(_:after:store:)`` sharing live-collection steps through `cache` and keeping a collection's bucket
    /// boundaries in `boundaries` (one cache per subscription).
    static func next(
        _ request: SubscriptionRequest, after anchor: UInt64, store: HealthStore, cache: CollectionStepCache?,
        boundaries: BucketBoundaryCache = BucketBoundaryCache()
    ) throws -> Step {
        switch request {
        case .observer(let subject, let name, let filter):
            let type = try QuantityType.named(name)
            let probe = try store.changes(subject: subject, type: type, filter: filter, anchor: anchor, limit: 1)
            if probe.isEmpty { return Step(updates: [], anchor: probe.anchor, more: false) }
            let newest = store.lastAnchor(type: type, subject: subject)
            return Step(updates: [.changed(anchor: newest)], anchor: newest, more: false)
        case .anchored(let query):
            let result = try changes(query, after: anchor, store: store)
            return Step(
                updates: result.isEmptyChange ? [] : [.changes(result)], anchor: result.anchor, more: result.hasMore)
        case .collection(let query):
            let typed = try query.checked()
            let key = CollectionStepCache.Key(query: query, from: anchor)
            if let shared = cache?.step(key) {
                // Another subscriber computed this step. Changes after its end anchor may have arrived before this
                // subscription was marked clean, so any newer change (of any subject: the clock is per type)
                // calls for a further step.
                let newest = store.lastAnchor(type: typed.type, subject: query.subject)
                return Step(updates: shared.updates, anchor: shared.anchor, more: newest > shared.anchor)
            }
            let changed = try store.changedSpans(
                subject: query.subject, type: typed.type, after: anchor, writer: query.filter.writer)
            let spans = changed.spans.compactMap { span -> ClosedRange<Timestamp>? in
                let low = max(span.lowerBound, query.enumerateFrom ?? .min)
                let high = min(span.upperBound, query.enumerateTo ?? .max)
                return low <= high ? low...high : nil
            }
            var updates: [UpdateContent] = []
            if !spans.isEmpty {
                let buckets = try store.collectionBuckets(
                    subject: query.subject, type: typed.type, filter: query.filter, options: query.options,
                    anchor: query.anchor, interval: query.interval, timeZone: query.timeZone, unit: typed.unit,
                    touching: spans, boundaries: boundaries)
                if !buckets.isEmpty {
                    updates = [.buckets(CollectionResult(unit: try unitSymbol(query), buckets: buckets))]
                }
            }
            // A step that reached no further anchor is not shared: a later subscriber at that anchor must look
            // for changes itself.
            if changed.anchor > anchor {
                cache?.store(key, CollectionStepCache.Step(updates: updates, anchor: changed.anchor))
            }
            return Step(updates: updates, anchor: changed.anchor, more: false)
        }
    }

    private static func changes(_ query: ChangesQuery, after anchor: UInt64, store: HealthStore) throws -> ChangesResult
    {
        let limit = query.limit == 0 ? maxChangesPerUpdate : min(Int(clamping: query.limit), maxChangesPerUpdate)
        let typed = try query.checked()
        let set = try store.changes(
            subject: query.subject, type: typed.type, filter: query.filter, anchor: anchor, limit: limit,
            unit: typed.unit)
        return ChangesResult(set, subject: query.subject)
    }

    private static func collection(
        _ typed: TypedRequest<CollectionQuery>, from: Timestamp?, to: Timestamp?, store: HealthStore
    ) throws -> [Statistics] {
        let query = typed.request
        return try store.collection(
            subject: query.subject, type: typed.type, filter: query.filter, options: query.options,
            anchor: query.anchor, interval: query.interval, timeZone: query.timeZone, unit: typed.unit,
            enumerateFrom: from, enumerateTo: to)
    }

    private static func unitSymbol(_ query: CollectionQuery) throws -> String {
        query.unit.isEmpty ? try QuantityType.named(query.type).batchUnit : query.unit
    }
}

extension ChangesResult {
    /// The wire form of an engine change set: added samples as a batch with explicit UUIDs.
    public init(_ set: ChangeSet, subject: String) {
        let added = set.added
        let batch = SampleBatch(
            batchID: 0, subject: subject, typeIdentifier: added.type.identifier, unit: added.unit.symbol,
            sources: added.sources, starts: added.starts, ends: added.ends, values: added.values,
            sourceIndices: added.sourceIndices, uuids: added.uuids, metadata: added.metadata)
        self.init(added: batch, deleted: set.deleted, anchor: set.anchor, hasMore: set.hasMore)
    }

    /// Whether nothing was added or deleted.
    var isEmptyChange: Bool { added.count == 0 && deleted.isEmpty }
}
