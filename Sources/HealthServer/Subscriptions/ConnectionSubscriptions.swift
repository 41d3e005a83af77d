import HealthEngine
import HealthModel
import HealthPosix
import HealthWire

/// The subscriptions of one connection: answers subscribe and unsubscribe (the initial computation runs on the
/// server's workers), computes later updates on the ``UpdateWorker`` thread and writes them in order, one
/// computation per subscription at a time.
///
/// Backpressure: an update is computed only while the connection is writable (its reply queue below the high
/// water mark); changes meanwhile only mark the subscription dirty, and the next computation covers them all
/// (coalescing). A collection subscription also starts at most one computation per ``collectionInterval``.
/// A connection that stays unwritable with updates waiting for ``timeout`` is terminated, so an unread
/// subscriber holds at most the queue limit plus one update per subscription.
///
/// Threading: every method runs on the connection's event loop, and the mutable state lives in a
/// ``LoopBoundBox`` that checks so on each access. Computations run on workers with copies of what they need
/// and hop back with `loop.execute` before touching it. The connection's callbacks are called on the loop only.
final class ConnectionSubscriptions: Sendable {
    /// Checks a subscription against the subscriber's grants and narrows its filter (see
    /// ``RequestDispatcher/authorizedSubscription(_:identity:)``); thread-safe.
    typealias Authorizer = @Sendable (SubscriptionRequest) throws -> SubscriptionRequest

    private struct Entry {
        let live: LiveSubscription
        /// The request as the client sent it; ``authorize`` narrows it again before every computation.
        let request: SubscriptionRequest
        let authorize: Authorizer
        var anchor: UInt64
        var computing = false
        /// Kept between a live collection's steps: its calendar is walked once, not per step.
        let boundaries = BucketBoundaryCache()
        /// The earliest instant a collection's next computation may start.
        var notBefore = ContinuousClock.now
        /// Whether a timer will pump this subscription at `notBefore`.
        var delayed = false

        var isCollection: Bool {
            if case .collection = request { true } else { false }
        }
    }

    /// Everything that changes (loop thread only).
    private struct State {
        var entries: [UInt32: Entry] = [:]
        var nextID: UInt32 = 1
        var stallTimer: ScheduledTask?
        var closed = false
    }

    private let state: LoopBoundBox<State>
    private let hub: SubscriptionHub
    private let store: HealthStore
    private let workers: WorkerPool
    private let loop: EventLoop
    private let timeout: Duration
    private let connectionOpen: @Sendable () -> Bool
    private let isWritable: @Sendable () -> Bool
    private let write: @Sendable ([UInt8]) -> Void
    private let complete: @Sendable ([UInt8]) -> Void
    private let terminate: @Sendable (HealthError) -> Void
    private let forceClose: @Sendable () -> Void
    private let encoder = FrameEncoder()

    /// Most subscriptions one connection may hold.
    static let maxPerConnection = 256
    /// Least time between the starts of two computations of one collection subscription: a recomputation of
    /// the touched buckets covers every change meanwhile (PROTOCOL.md, update).
    static let collectionInterval = Duration.milliseconds(50)

    /// The callbacks act on the connection and are called on `loop` only.
    init(
        hub: SubscriptionHub, store: HealthStore, workers: WorkerPool, loop: EventLoop, timeout: Duration,
        isOpen: @escaping @Sendable () -> Bool, isWritable: @escaping @Sendable () -> Bool,
        write: @escaping @Sendable ([UInt8]) -> Void, complete: @escaping @Sendable ([UInt8]) -> Void,
        terminate: @escaping @Sendable (HealthError) -> Void, forceClose: @escaping @Sendable () -> Void
    ) {
        self.state = LoopBoundBox(State(), loop: loop)
        self.forceClose = forceClose
        self.complete = complete
        self.hub = hub
        self.store = store
        self.workers = workers
        self.loop = loop
        self.timeout = timeout
        self.connectionOpen = isOpen
        self.isWritable = isWritable
        self.write = write
        self.terminate = terminate
    }

    /// Handles subscribe and unsubscribe, completing the request with `complete` exactly once. Returns false for
    /// any other message. Every computation of a subscription's updates runs on the request `authorize` returns.
    func handle(_ message: Message, requestID: UInt32, authorize: @escaping Authorizer) -> Bool {
        let reply = complete
        switch message {
        case .subscribe(let m):
            subscribe(m.request, requestID: requestID, authorize: authorize)
            return true
        case .unsubscribe(let m):
            if let entry = state.value.entries.removeValue(forKey: m.subscriptionID) {
                hub.remove(entry.live)
                reply(encode(.unsubscribed(Unsubscribed(subscriptionID: m.subscriptionID)), id: requestID))
            } else {
                let error = HealthError(
                    .unknownSubscription, "this connection holds no subscription \(m.subscriptionID)")
                reply(encode(.error(ErrorReply(error)), id: requestID))
            }
            return true
        default:
            return false
        }
    }

    /// Whether the connection holds no subscription.
    var isEmpty: Bool { state.value.entries.isEmpty }

    /// The connection closed: every subscription ends.
    func closeAll() {
        state.value.closed = true
        state.value.stallTimer?.cancel()
        state.value.stallTimer = nil
        let entries = state.value.entries
        state.value.entries.removeAll()
        for entry in entries.values { hub.remove(entry.live) }
    }

    /// The reply queue drained below its low water mark (or filled up).
    func writabilityChanged(_ writable: Bool) {
        guard writable else { return armStallTimer() }
        state.value.stallTimer?.cancel()
        state.value.stallTimer = nil
        for id in state.value.entries.keys.sorted() { pump(id) }
    }

    private func subscribe(_ request: SubscriptionRequest, requestID: UInt32, authorize: @escaping Authorizer) {
        let reply = complete
        guard state.value.entries.count < ConnectionSubscriptions.maxPerConnection else {
            let error = HealthError(
                .invalidArgument, "a connection holds at most \(ConnectionSubscriptions.maxPerConnection) subscriptions"
            )
            return reply(encode(.error(ErrorReply(error)), id: requestID))
        }
        let store = store
        let loop = loop
        // On the worker: the initial computation, no state; the outcome hops back to the loop.
        let accepted = workers.submit { [self] in
            let outcome = Result { try SubscriptionUpdater.start(authorize(request), store: store) }
            _ = loop.execute { self.started(request, authorize, outcome, requestID: requestID) }
        }
        if !accepted {
            reply(
                encode(
                    .error(ErrorReply(HealthError(.busy, "the server is busy (worker queue full); retry later"))),
                    id: requestID))
        }
    }

    private func started(
        _ request: SubscriptionRequest, _ authorize: @escaping Authorizer,
        _ outcome: Result<SubscriptionUpdater.Step, any Error>, requestID: UInt32
    ) {
        // A closed connection needs no reply (and its owner may be gone).
        guard !state.value.closed else { return }
        let reply = complete
        let step: SubscriptionUpdater.Step
        switch outcome {
        case .success(let value): step = value
        case .failure(let error):
            let health = (error as? HealthError) ?? HealthError(.internalError, "subscribe failed: \(error)")
            return reply(encode(.error(ErrorReply(health)), id: requestID))
        }
        let id = state.value.nextID
        state.value.nextID = id == UInt32.max ? 1 : id + 1
        let target = SubscriptionUpdater.target(of: request)
        let typeIndex = (try? QuantityType.named(target.type).index) ?? 0
        let loop = loop
        // The closure keeps this object alive until closeAll() or unsubscribe removes the subscription. It runs
        // on the thread that changed the store: it only hops to the loop.
        let live = LiveSubscription(subject: target.subject, typeIndex: typeIndex) { [self] in
            _ = loop.execute { self.pump(id) }
        }
        state.value.entries[id] = Entry(live: live, request: request, authorize: authorize, anchor: step.anchor)
        reply(encode(.subscribed(Subscribed(subscriptionID: id)), id: requestID))
        for update in step.updates { write(encode(.update(Update(update)), id: id)) }
        hub.add(live)
        // Changes between the initial computation and joining the hub are caught by one more step.
        live.markDirty()
    }

    /// Computes the next update of subscription `id` if it is dirty, idle and the connection can take it.
    private func pump(_ id: UInt32) {
        guard !state.value.closed, connectionOpen(), var entry = state.value.entries[id], !entry.computing,
            entry.live.dirty.load(ordering: .acquiring)
        else { return }
        guard isWritable() else { return armStallTimer() }
        if entry.isCollection {
            let now = ContinuousClock.now
            guard now >= entry.notBefore else { return delay(id, entry) }
            entry.notBefore = now + ConnectionSubscriptions.collectionInterval
        }
        entry.live.dirty.store(false, ordering: .releasing)
        entry.computing = true
        state.value.entries[id] = entry
        let request = entry.request
        let authorize = entry.authorize
        let anchor = entry.anchor
        let boundaries = entry.boundaries
        let store = store
        let loop = loop
        let cache = hub.collectionSteps
        // On the worker: the step from copies of what it needs; the outcome hops back to the loop.
        let accepted = (UpdateWorker.pool ?? workers).submit { [self] in
            // The cache key is the authorized (narrowed) query: subscribers share steps only with equal filters.
            let outcome = Result {
                try SubscriptionUpdater.next(
                    authorize(request), after: anchor, store: store, cache: cache, boundaries: boundaries)
            }
            _ = loop.execute { self.computed(id, outcome) }
        }
        if !accepted {
            // Try again shortly: the worker queue is full.
            state.value.entries[id]?.computing = false
            entry.live.dirty.store(true, ordering: .releasing)
            _ = loop.schedule(after: .milliseconds(10)) { [self] in self.pump(id) }
        }
    }

    /// Pumps subscription `id` again once its ``collectionInterval`` has passed (one timer at a time).
    private func delay(_ id: UInt32, _ entry: Entry) {
        guard !entry.delayed else { return }
        state.value.entries[id]?.delayed = true
        _ = loop.schedule(after: entry.notBefore - ContinuousClock.now) { [self] in
            state.value.entries[id]?.delayed = false
            pump(id)
        }
    }

    private func computed(_ id: UInt32, _ outcome: Result<SubscriptionUpdater.Step, any Error>) {
        guard !state.value.closed, var entry = state.value.entries[id] else { return }
        entry.computing = false
        switch outcome {
        case .success(let step):
            entry.anchor = step.anchor
            state.value.entries[id] = entry
            for update in step.updates { write(encode(.update(Update(update)), id: id)) }
            if step.more { entry.live.dirty.store(true, ordering: .releasing) }
        case .failure(let error):
            // The anchor expired while the subscriber lagged (or the store refused): the subscription cannot go
            // on without losing changes, so the connection learns why and ends.
            state.value.entries[id] = entry
            let health = (error as? HealthError) ?? HealthError(.internalError, "\(error)")
            return terminate(HealthError(health.code, "\(health.message) (subscription \(id))"))
        }
        pump(id)
    }

    private func armStallTimer() {
        guard state.value.stallTimer == nil, !state.value.closed else { return }
        state.value.stallTimer = loop.schedule(after: timeout) { [self] in self.stallTimerFired() }
    }

    private func stallTimerFired() {
        state.value.stallTimer = nil
        guard !state.value.closed, connectionOpen(), !isWritable() else { return }
        terminate(
            HealthError(
                .busy, "subscription updates were not read for \(timeout) with the reply queue full; disconnecting"))
        // The error frame waits behind the unread queue, which may never drain: close for good after a grace
        // period instead of waiting for the flush.
        _ = loop.schedule(after: .seconds(2)) { [self] in if !state.value.closed { forceClose() } }
    }

    private func encode(_ message: Message, id: UInt32) -> [UInt8] {
        encoder.encode(message.frame(requestID: id))
    }
}
