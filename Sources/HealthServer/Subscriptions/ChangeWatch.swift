import HealthModel
import HealthPosix

/// Why a stream of events outside the binary protocol ends while its client still reads: said in its last event,
/// so that the client reconnects (to the subject's new owner, when its partition moved).
public struct StreamEnd: Sendable, Equatable {
    /// `shutdown` (the server stops), `moved` (this node no longer serves the subject: its partition moved),
    /// `unavailable` (this node cannot serve the subject now, e.g. its lease was not renewed in time), or `gone`
    /// (the client left: never sent).
    public var reason: String
    /// A sentence for people.
    public var detail: String
    /// With `moved`: the HTTP API (`http://host:port`) of the node that serves the subject now, when known.
    public var owner: String?

    /// The client closed the connection (nobody reads the `end` event).
    public static let clientGone = StreamEnd(reason: "gone", detail: "the client closed the connection")

    /// The server stops.
    public static let shutdown = StreamEnd(
        reason: "shutdown",
        detail: "the server is stopping; reconnect (in cluster mode another node serves the subject)")
}

/// Interest in one subject's samples of some types, for a stream of events outside the binary protocol (the HTTP
/// API's server-sent events): told of every change of any of them, and of every moment it should check whether
/// this node still serves the subject (cluster mode: a partition that moves away), as live subscriptions are. One
/// subscription per type, all waking one condition. A server that stops ends it (``StreamEnd/shutdown``).
///
/// Thread-safe. ``wait(for:)`` blocks: call it on the stream's own thread, never an event loop's. Call ``close()``
/// when the stream ends.
public final class ChangeWatch: Sendable {
    /// What a ``wait(for:)`` saw.
    public enum Wake: Sendable, Equatable {
        /// The places (in the watched types' order) of the types that changed; may be empty (a reason to check
        /// that found this node still serving the subject).
        case changed(Set<Int>)
        /// Nothing happened within the time.
        case quiet
        /// The stream must end, for this reason.
        case end(StreamEnd)
    }

    private struct State {
        var woken = false
        var ending: StreamEnd?
    }

    private let hub: SubscriptionHub
    private let streams: HTTPStreams
    private let subscriptions: [LiveSubscription]
    private let state: ConditionLock<State>
    /// Why the stream must end now because of where the subject is served; `nil` while this node serves it.
    private let placement: @Sendable () -> StreamEnd?

    init(
        hub: SubscriptionHub, streams: HTTPStreams, subject: String, types: [QuantityType],
        placement: @escaping @Sendable () -> StreamEnd?
    ) {
        let state = ConditionLock(State())
        self.hub = hub
        self.streams = streams
        self.state = state
        self.placement = placement
        subscriptions = types.map { type in
            LiveSubscription(subject: subject, typeIndex: type.index) { state.update { $0.woken = true } }
        }
        for subscription in subscriptions { hub.add(subscription) }
        if !streams.watching(self) { end(.shutdown) }
    }

    deinit {
        for subscription in subscriptions { hub.remove(subscription) }
    }

    /// Stops watching: the stream ended.
    public func close() {
        streams.stopWatching(self)
        for subscription in subscriptions { hub.remove(subscription) }
    }

    /// Ends the watch: the next (or current) ``wait(for:)`` returns `.end(end)` (the first end given wins).
    public func end(_ end: StreamEnd) {
        state.update { state in
            if state.ending == nil { state.ending = end }
        }
    }

    /// Waits for `duration` (none when it is not positive), or less if the watch is ended meanwhile.
    public func pause(for duration: Duration) {
        guard duration > .zero else { return }
        _ = state.wait(until: .after(duration)) { $0.ending != nil ? true : nil }
    }

    /// Waits until a change (or a reason to check) arrived since the last call, the watch was ended, or `timeout`
    /// passed. After a change, checks that this node still serves the subject (else the stream must end:
    /// `moved`, or `unavailable`). Changes that arrive meanwhile coalesce into one.
    public func wait(for timeout: Duration) -> Wake {
        let woke = state.waitThenUpdate(until: .after(timeout)) { state -> Wake? in
            if let ending = state.ending { return .end(ending) }
            guard state.woken else { return nil }
            state.woken = false
            return .changed([])
        }
        guard let woke else { return .quiet }
        if case .end = woke { return woke }
        if let end = placement() { return .end(end) }
        // Cleared after the wake, so a change from now on wakes the next wait.
        var changed = Set<Int>()
        for (index, subscription) in subscriptions.enumerated()
        where subscription.dirty.exchange(false, ordering: .acquiringAndReleasing) {
            changed.insert(index)
        }
        return .changed(changed)
    }
}

extension HealthServer {
    /// A watch of `subject`'s samples of `types` (see ``ChangeWatch``); close it when the stream ends.
    public func watchChanges(subject: String, types: [QuantityType]) -> ChangeWatch {
        ChangeWatch(hub: subscriptions, streams: httpStreams, subject: subject, types: types) { [self] in
            streamEnd(for: subject)
        }
    }

    /// Why a stream of `subject`'s events must end because of where the subject is served: `moved` (with the
    /// new owner's HTTP API when known) once this node no longer holds its partition (handed over, released,
    /// its lease lost; another node may not have taken it yet), `unavailable` while it holds it but cannot serve
    /// it (a lease not renewed in time, a partition being rebuilt); `nil` while this node serves it, and always in
    /// single-node mode.
    public func streamEnd(for subject: String) -> StreamEnd? {
        guard let cluster else { return nil }
        do {
            try cluster.checkServes(subject)
            return nil
        } catch {
            let detail = (error as? HealthError)?.message ?? "\(error)"
            guard cluster.log.owns(cluster.log.layout.partition(of: subject)) else {
                return StreamEnd(reason: "moved", detail: detail, owner: httpOwner(of: subject))
            }
            return StreamEnd(reason: "unavailable", detail: detail)
        }
    }
}
