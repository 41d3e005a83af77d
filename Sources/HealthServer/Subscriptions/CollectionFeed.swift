import HealthEngine
import HealthModel
import HealthWire
import Synchronization

/// A live statistics collection followed outside the binary protocol (the HTTP API's collection events): the
/// computation of a collection subscription (``SubscriptionUpdater``), placed and authorized before every step
/// as a subscription is (so grant changes apply at once), its steps shared with the subscriptions and feeds of
/// the same query, and its bucket boundaries kept between steps.
///
/// Thread-safe, but meant for one stream's thread: each call blocks while it reads the store.
public final class CollectionFeed: Sendable {
    /// Buckets to apply to a table, current at an anchor.
    public struct Step: Sendable {
        /// The unit of every figure.
        public var unit: String
        /// Buckets in time order: every one of the query (``replacesAll``), or those the changes touched,
        /// recomputed (a bucket without figures has no data any more).
        public var buckets: [Statistics]
        /// The change anchor these buckets are current at: where the next step starts.
        public var anchor: UInt64
        /// Whether the buckets replace the whole table (a first step, or a resumption from an unknown anchor).
        public var replacesAll: Bool
        /// Whether changes beyond ``anchor`` wait already: take the next step at once.
        public var more: Bool
    }

    private let query: CollectionQuery
    private let authorize: @Sendable (SubscriptionRequest) throws -> SubscriptionRequest
    private let store: HealthStore
    private let cache: CollectionStepCache
    private let boundaries = BucketBoundaryCache()

    init(
        query: CollectionQuery, store: HealthStore, cache: CollectionStepCache,
        authorize: @escaping @Sendable (SubscriptionRequest) throws -> SubscriptionRequest
    ) {
        self.query = query
        self.store = store
        self.cache = cache
        self.authorize = authorize
    }

    /// Every bucket of the query, current at the anchor returned (a change racing the reading is in the next
    /// step). Throws the query's errors, ``ErrorCode/forbidden`` and, in cluster mode, ``ErrorCode/notOwner``.
    public func snapshot() throws -> Step {
        let step = try SubscriptionUpdater.start(authorize(.collection(query)), store: store)
        return Step(
            unit: Self.unit(of: step.updates) ?? query.unit, buckets: Self.buckets(of: step.updates),
            anchor: step.anchor, replacesAll: true, more: false)
    }

    /// The buckets the changes after `anchor` touched, recomputed; a ``snapshot()`` instead when `anchor` is
    /// not one this server can resume from (expired past the deletion retention, or newer than any change it
    /// knows: another store), so the caller's table is whole again either way.
    public func changes(after anchor: UInt64) throws -> Step {
        let request = try authorize(.collection(query))
        let step: SubscriptionUpdater.Step
        do {
            step = try SubscriptionUpdater.next(
                request, after: anchor, store: store, cache: cache, boundaries: boundaries)
        } catch let error as HealthError where error.code == .anchorExpired {
            return try snapshot()
        }
        return Step(
            unit: Self.unit(of: step.updates) ?? query.unit, buckets: Self.buckets(of: step.updates),
            anchor: step.anchor, replacesAll: false, more: step.more)
    }

    private static func buckets(of updates: [UpdateContent]) -> [Statistics] {
        updates.flatMap { update -> [Statistics] in
            guard case .buckets(let result) = update else { return [] }
            return result.buckets
        }
    }

    private static func unit(of updates: [UpdateContent]) -> String? {
        for case .buckets(let result) in updates { return result.unit }
        return nil
    }
}

extension HealthServer {
    /// A live collection of `query` read as `identity` (see ``CollectionFeed``).
    public func collectionFeed(_ query: CollectionQuery, as identity: ClientIdentity) -> CollectionFeed {
        let dispatcher = dispatcher
        return CollectionFeed(query: query, store: store, cache: subscriptions.collectionSteps) { request in
            try dispatcher.authorizedSubscription(request, identity: identity)
        }
    }
}
