import HealthModel
import HealthWire
import Synchronization

/// One step of a live collection: the buckets to replace in the caller's table.
public struct LiveCollectionUpdate: Hashable, Sendable {
    /// The unit of every figure.
    public var unit: String
    /// Recomputed buckets in time order; a bucket without figures has no data any more (remove it).
    public var buckets: [Statistics]
    /// Whether these buckets replace the whole table (the first update, and the first after a reconnect).
    public var replacesAll: Bool
}

/// A live collection's table kept current by applying ``LiveCollectionUpdate``s: buckets with data by start.
public struct LiveCollectionTable: Hashable, Sendable {
    /// Buckets with data, by start.
    public private(set) var buckets: [Timestamp: Statistics] = [:]

    /// An empty table.
    public init() {}

    /// Applies one update; returns the starts of the buckets it changed.
    @discardableResult
    public mutating func apply(_ update: LiveCollectionUpdate) -> [Timestamp] {
        if update.replacesAll { buckets.removeAll() }
        for bucket in update.buckets {
            buckets[bucket.start] = LiveCollectionTable.hasData(bucket) ? bucket : nil
        }
        return update.buckets.map(\.start)
    }

    /// The buckets with data in time order.
    public var sorted: [Statistics] { buckets.values.sorted { $0.start < $1.start } }

    /// Whether a bucket holds any figure (an enumerated empty bucket holds none).
    public static func hasData(_ bucket: Statistics) -> Bool {
        let f = bucket.figures
        return f.sum != nil || f.average != nil || f.minimum != nil || f.maximum != nil || f.mostRecent != nil
            || f.duration != nil || !bucket.bySource.isEmpty
    }
}

extension HealthClient {
    /// HKAnchoredObjectQuery: samples added (arrival order) and deleted after `anchor` (0: from the beginning),
    /// at most `limit` together (0: the server's page size); continue from the result's anchor while `hasMore`.
    public func changes(
        _ type: String, subject: String, filter: SampleFilter = .all, since anchor: UInt64 = 0, limit: UInt64 = 0,
        unit: String = ""
    ) async throws(HealthClientError) -> ChangesResult {
        let query = ChangesQuery(subject: subject, type: type, filter: filter, anchor: anchor, limit: limit, unit: unit)
        return try await send(query)
    }

    /// HKObserverQuery: yields the newest anchor each time samples matching the type and filter change. After a
    /// reconnect it yields 0 once (changes may have happened meanwhile). Cancel by ending the iteration.
    public func observe(
        _ type: String, subject: String, filter: SampleFilter = .all
    ) -> AsyncThrowingStream<UInt64, any Error> {
        subscription(
            request: { .observer(subject: subject, type: type, filter: filter) },
            transform: { update in
                guard case .changed(let anchor) = update.content else { return nil }
                return anchor
            },
            resubscribed: { 0 })
    }

    /// A running anchored query: the changes after `query.anchor`, then every later batch of changes, each with
    /// the anchor reached. After a reconnect it resubscribes from the last anchor delivered, so no change is
    /// lost or repeated. Cancel by ending the iteration.
    public func anchoredChanges(_ query: ChangesQuery) -> AsyncThrowingStream<ChangesResult, any Error> {
        let anchor = Atomic<UInt64>(query.anchor)
        return subscription(
            request: {
                var resumed = query
                resumed.anchor = anchor.load(ordering: .acquiring)
                return .anchored(resumed)
            },
            transform: { update in
                guard case .changes(let changes) = update.content else { return nil }
                anchor.store(changes.anchor, ordering: .releasing)
                return changes
            },
            resubscribed: nil)
    }

    /// A statistics collection with an update handler: all buckets first, then the buckets each change touched,
    /// recomputed (apply them to a ``LiveCollectionTable``). After a reconnect the table is sent whole again.
    public func liveCollection(_ query: CollectionQuery) -> AsyncThrowingStream<LiveCollectionUpdate, any Error> {
        // The first update after each subscribe replaces the table: the server sends all buckets then.
        let fresh = Atomic<Bool>(true)
        return subscription(
            request: {
                fresh.store(true, ordering: .releasing)
                return .collection(query)
            },
            transform: { update in
                guard case .buckets(let result) = update.content else { return nil }
                let first = fresh.exchange(false, ordering: .acquiringAndReleasing)
                return LiveCollectionUpdate(unit: result.unit, buckets: result.buckets, replacesAll: first)
            },
            resubscribed: nil)
    }

    /// Runs a subscription until the consumer stops iterating: subscribes, forwards transformed updates, and
    /// after a lost connection reconnects and subscribes again (`request` gives the request to send each time;
    /// `resubscribed` an element to yield after a resubscription). Non-retryable errors end the stream.
    private func subscription<Element: Sendable>(
        request: @escaping @Sendable () -> SubscriptionRequest,
        transform: @escaping @Sendable (Update) -> Element?,
        resubscribed: (@Sendable () -> Element)?
    ) -> AsyncThrowingStream<Element, any Error> {
        let (stream, output) = AsyncThrowingStream<Element, any Error>.makeStream(bufferingPolicy: .unbounded)
        let task = Task { [self] in
            var attempt = 0
            var subscribedBefore = false
            while !Task.isCancelled {
                let (ended, endSignal) = AsyncStream<HealthClientError>.makeStream()
                do {
                    let connection = try await connection()
                    let id = try await connection.subscribe(
                        request(),
                        handlers: .init(
                            update: { update in if let element = transform(update) { output.yield(element) } },
                            end: { error in
                                endSignal.yield(error)
                                endSignal.finish()
                            }))
                    if subscribedBefore, let resubscribed { output.yield(resubscribed()) }
                    subscribedBefore = true
                    attempt = 0
                    var iterator = ended.makeAsyncIterator()
                    let error = await iterator.next()
                    if Task.isCancelled {
                        try? await connection.unsubscribe(id)
                        break
                    }
                    if let error, !error.isRetryable, error.origin == .server {
                        output.finish(throwing: error)
                        return
                    }
                } catch {
                    attempt += 1
                    guard (error as? HealthClientError)?.isRetryable == true, attempt < configuration.retry.maxAttempts
                    else {
                        output.finish(throwing: error)
                        return
                    }
                    try? await Task.sleep(for: configuration.retry.backoff(beforeAttempt: attempt))
                }
            }
            output.finish()
        }
        output.onTermination = { _ in task.cancel() }
        return stream
    }
}
