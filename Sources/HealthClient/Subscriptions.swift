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
    /// reconnect it yields 0 once (changes may have happened meanwhile). Reconnects like ``subscribe(_:)``;
    /// cancel by ending the iteration.
    public func observe(
        _ type: String, subject: String, filter: SampleFilter = .all
    ) -> AsyncThrowingStream<UInt64, any Error> {
        updates(.observer(type, subject: subject, filter: filter))
    }

    /// A running anchored query: the changes after `query.anchor`, then every later batch of changes, each with
    /// the anchor reached. After a reconnect it resubscribes from the last anchor delivered, so no change is
    /// lost or repeated. Reconnects like ``subscribe(_:)``; cancel by ending the iteration.
    public func anchoredChanges(_ query: ChangesQuery) -> AsyncThrowingStream<ChangesResult, any Error> {
        updates(.anchoredChanges(query))
    }

    /// A statistics collection with an update handler: all buckets first, then the buckets each change touched,
    /// recomputed (apply them to a ``LiveCollectionTable``). After a reconnect the table is sent whole again.
    /// Reconnects like ``subscribe(_:)``; cancel by ending the iteration.
    public func liveCollection(_ query: CollectionQuery) -> AsyncThrowingStream<LiveCollectionUpdate, any Error> {
        updates(.collection(query))
    }

    /// A live query's updates alone, reconnecting silently (``subscribe(_:)`` also yields the reconnects).
    public func updates<Element>(_ query: LiveQuery<Element>) -> AsyncThrowingStream<Element, any Error> {
        run(query) { event in
            guard case .update(let element) = event else { return nil }
            return element
        }
    }

    /// Runs a live query for as long as the stream is iterated: its updates in order, and around each outage
    /// one ``SubscriptionEvent/disconnected(_:)`` and one ``SubscriptionEvent/reconnected(_:)``.
    ///
    /// Retry contract: until the first subscription is confirmed, connection failures are retried per
    /// ``ClientConfiguration/retry`` (within its budget, so a wrong address fails); once it ran, a lost connection is
    /// retried without limit per ``ClientConfiguration/reconnect`` (jittered exponential backoff, capped),
    /// resubscribing where the query left off (an anchored query from the last anchor delivered; a collection
    /// sends its table whole again). A permanent error from the server (e.g. access revoked) ends the stream
    /// with that error. Ending the iteration (or cancelling its task) unsubscribes and stops reconnecting.
    ///
    /// Threading: the stream may be iterated from any task; events are buffered without bound, so iterate
    /// promptly. Events are yielded in order from the connection's reader thread.
    public func subscribe<Element>(_ query: LiveQuery<Element>) -> AsyncThrowingStream<
        SubscriptionEvent<Element>, any Error
    > {
        run(query) { $0 }
    }

    /// The subscription loop behind ``subscribe(_:)`` and ``updates(_:)``; `select` picks what the stream yields.
    private func run<Element, Output: Sendable>(
        _ query: LiveQuery<Element>, _ select: @escaping @Sendable (SubscriptionEvent<Element>) -> Output?
    ) -> AsyncThrowingStream<Output, any Error> {
        let (stream, output) = AsyncThrowingStream<Output, any Error>.makeStream(bufferingPolicy: .unbounded)
        let emitter = SubscriptionEmitter(output: output, select: select)
        let task = Task { [self] in
            let session = query.start()
            var pauses = configuration.reconnect.pauses()
            var outage: (cause: HealthClientError, since: ContinuousClock.Instant, attempts: Int)?
            var initial = RetrySchedule(configuration.retry)
            // Cluster mode: a subscription lives on the node owning its subject, found as requests find it.
            let subject = session.request().subject
            var redirects = 0
            while !Task.isCancelled {
                let (ended, endSignal) = AsyncStream<HealthClientError>.makeStream()
                if let outage {
                    emitter.hold(
                        cause: outage.cause, since: outage.since, attempts: outage.attempts + 1,
                        then: session.resubscribed?())
                }
                let owner = knownOwner(of: subject)
                do throws(HealthClientError) {
                    let connection = try await self.connection(to: owner)
                    let id = try await connection.subscribe(
                        session.request(),
                        handlers: .init(
                            update: { update in if let element = session.transform(update) { emitter.update(element) }
                            },
                            end: { error in
                                endSignal.yield(error)
                                endSignal.finish()
                            }))
                    emitter.confirm()
                    outage = nil
                    redirects = 0
                    pauses.reset()
                    var iterator = ended.makeAsyncIterator()
                    let error = await iterator.next()
                    if Task.isCancelled {
                        try? await connection.unsubscribe(id)
                        break
                    }
                    guard let error else { continue }
                    _ = learnRoute(subject, from: error, routed: owner != nil)
                    if !error.isRetryable, error.origin == .server {
                        output.finish(throwing: error)
                        return
                    }
                    outage = (error, .now, 0)
                    emitter.emit(.disconnected(error))
                } catch {
                    if Task.isCancelled { break }
                    if learnRoute(subject, from: error, routed: owner != nil), redirects < Self.maxRedirects {
                        redirects += 1
                        continue
                    }
                    guard error.isRetryable else {
                        output.finish(throwing: error)
                        return
                    }
                    if var current = outage {
                        current.attempts += 1
                        outage = current
                        try? await Task.sleep(for: pauses.next())
                    } else {
                        guard let retry = initial.retry(after: error) else {
                            output.finish(throwing: error)
                            return
                        }
                        retryObserver?(retry)
                        try? await Task.sleep(for: retry.pause)
                    }
                }
            }
            output.finish()
        }
        output.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// What ``HealthClient/subscribe(_:)`` yields.
public enum SubscriptionEvent<Element: Sendable>: Sendable {
    /// The live query's next update.
    case update(Element)
    /// The connection was lost (the error says how); the subscription is reconnecting. Once per outage.
    case disconnected(HealthClientError)
    /// The subscription runs again; yielded once per outage, before any update of the new subscription.
    case reconnected(Reconnection)
}

extension SubscriptionEvent: Equatable where Element: Equatable {}

/// How a subscription came back after an outage.
public struct Reconnection: Hashable, Sendable {
    /// Connection attempts the reconnect took, the successful one included (1: the first try succeeded).
    public var attempts: Int
    /// From the moment the loss was noticed to the server's confirmation of the new subscription.
    public var downtime: Duration
    /// The error that ended the previous connection.
    public var cause: HealthClientError

    /// A reconnection record.
    public init(attempts: Int, downtime: Duration, cause: HealthClientError) {
        self.attempts = attempts
        self.downtime = downtime
        self.cause = cause
    }
}

/// A query that keeps running on the server and pushes updates: run it with ``HealthClient/subscribe(_:)`` (updates
/// and reconnects) or ``HealthClient/updates(_:)`` (updates alone). A description, not a running query: each run
/// starts from the query as given.
public struct LiveQuery<Element: Sendable>: Sendable {
    /// Makes the state of one run: what to (re)subscribe with, how updates map to elements, what to yield after a
    /// resubscription.
    let start: @Sendable () -> LiveQueryRun<Element>
}

/// The state of one run of a ``LiveQuery``.
struct LiveQueryRun<Element: Sendable>: Sendable {
    /// The request to send at each (re)subscription.
    var request: @Sendable () -> SubscriptionRequest
    /// The element an update carries, if any (called on the reader thread, in order).
    var transform: @Sendable (Update) -> Element?
    /// An element to yield after each resubscription.
    var resubscribed: (@Sendable () -> Element)?
}

extension LiveQuery where Element == UInt64 {
    /// HKObserverQuery: the newest anchor each time samples matching the type and filter change; 0 after a
    /// reconnect (changes may have happened meanwhile).
    public static func observer(_ type: String, subject: String, filter: SampleFilter = .all) -> LiveQuery {
        LiveQuery {
            LiveQueryRun(
                request: { .observer(subject: subject, type: type, filter: filter) },
                transform: { update in
                    guard case .changed(let anchor) = update.content else { return nil }
                    return anchor
                },
                resubscribed: { 0 })
        }
    }
}

extension LiveQuery where Element == ChangesResult {
    /// A running anchored query: the changes after `query.anchor`, then each later batch; after a reconnect it
    /// resumes from the last anchor delivered (nothing lost, nothing repeated).
    public static func anchoredChanges(_ query: ChangesQuery) -> LiveQuery {
        LiveQuery {
            let anchor = Atomic<UInt64>(query.anchor)
            return LiveQueryRun(
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
    }
}

extension LiveQuery where Element == LiveCollectionUpdate {
    /// A statistics collection kept current: all buckets first (and again after a reconnect, with
    /// ``LiveCollectionUpdate/replacesAll``), then the buckets each change touched.
    public static func collection(_ query: CollectionQuery) -> LiveQuery {
        LiveQuery {
            // The first update after each subscribe replaces the table: the server sends all buckets then.
            let fresh = Atomic<Bool>(true)
            return LiveQueryRun(
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
    }
}

/// Yields one run's events in order, from the reader thread (updates) and the subscription task (the rest). A
/// reconnection is held until the new subscription is confirmed or its first update arrives, whichever the
/// reader thread or the task sees first, so it always precedes that subscription's updates.
private final class SubscriptionEmitter<Element: Sendable, Output: Sendable>: Sendable {
    private struct Held {
        var cause: HealthClientError
        var since: ContinuousClock.Instant
        var attempts: Int
        var then: Element?
    }

    private let output: AsyncThrowingStream<Output, any Error>.Continuation
    private let select: @Sendable (SubscriptionEvent<Element>) -> Output?
    private let held = Mutex<Held?>(nil)

    init(
        output: AsyncThrowingStream<Output, any Error>.Continuation,
        select: @escaping @Sendable (SubscriptionEvent<Element>) -> Output?
    ) {
        self.output = output
        self.select = select
    }

    /// Holds a reconnection (replacing one held by a failed attempt) until ``confirm()`` or the next update.
    func hold(cause: HealthClientError, since: ContinuousClock.Instant, attempts: Int, then element: Element?) {
        held.withLock { $0 = Held(cause: cause, since: since, attempts: attempts, then: element) }
    }

    /// The new subscription is confirmed: yields the held reconnection, if the reader thread did not already.
    func confirm() { held.withLock { flush(&$0) } }

    /// Yields an update, after the held reconnection if any.
    func update(_ element: Element) {
        held.withLock { held in
            flush(&held)
            yield(.update(element))
        }
    }

    /// Yields an event at once.
    func emit(_ event: SubscriptionEvent<Element>) { held.withLock { _ in yield(event) } }

    private func flush(_ held: inout Held?) {
        guard let reconnect = held else { return }
        held = nil
        yield(
            .reconnected(
                Reconnection(attempts: reconnect.attempts, downtime: .now - reconnect.since, cause: reconnect.cause)))
        if let element = reconnect.then { yield(.update(element)) }
    }

    private func yield(_ event: SubscriptionEvent<Element>) {
        if let selected = select(event) { output.yield(selected) }
    }
}
