import HealthCluster
import HealthHTTP
import HealthPosix
import HealthModel
import HealthWire

extension HealthServer {
    /// The identity an HTTP request acts as: the one whose token its `Authorization: Bearer` header carries
    /// (``ErrorCode/unauthenticated`` without one, or for a wrong one); with `hkd --auth off`, an identity with
    /// no name that every request may act as.
    public func identity(authorization: String?) throws(HealthError) -> ClientIdentity {
        guard let identities else { return ClientIdentity(name: "") }
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            throw HealthError(.unauthenticated, "send the token as Authorization: Bearer hkd1_…")
        }
        return try identities.identity(
            presenting: String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces))
    }

    /// The reply messages to `message`, checked, placed, authorized and served for `identity` exactly as on the
    /// binary protocol (``RequestDispatcher/handle(_:identity:)``).
    public func answer(_ message: Message, as identity: ClientIdentity) -> [Message] {
        dispatcher.handle(message, identity: identity)
    }

    /// Cluster mode: the HTTP API (`http://host:port`, `https://` with TLS) of the node that owns `subject`, when
    /// another node does and announced its HTTP address; `nil` when this node serves the subject, in single-node
    /// mode, and when no such node is known (the request then gets the error the binary protocol gives).
    public func httpOwner(of subject: String) -> String? {
        guard let cluster else { return nil }
        do {
            try cluster.checkServes(subject)
            return nil
        } catch let error as HealthError where error.code == .notOwner {
            return cluster.httpAddress(ofOwnerOf: subject).map { (usesTLS ? "https://" : "http://") + $0 }
        } catch {
            return nil
        }
    }

    /// What a connection's `welcome` would say to `identity`.
    public func welcome(for identity: ClientIdentity) -> Welcome {
        Welcome(
            serverVersion: Self.version, connectionID: 0, identity: identity.name,
            limits: configuration.sessionLimits)
    }
}

/// Interest in one subject's samples of some types, for a stream of events outside the binary protocol (the HTTP
/// API's server-sent events): told of every change of any of them, and of every moment it should check whether
/// this node still serves the subject (cluster mode: a partition that moves away), as live subscriptions are. One
/// subscription per type, all waking one condition.
///
/// Thread-safe. ``wait(for:)`` blocks: call it on the stream's own thread, never an event loop's.
public final class ChangeWatch: Sendable {
    private let hub: SubscriptionHub
    private let subscriptions: [LiveSubscription]
    private let woken: ConditionLock<Bool>

    init(hub: SubscriptionHub, subject: String, types: [QuantityType]) {
        let woken = ConditionLock(false)
        self.hub = hub
        self.woken = woken
        subscriptions = types.map { type in
            LiveSubscription(subject: subject, typeIndex: type.index) { woken.update { $0 = true } }
        }
        for subscription in subscriptions { hub.add(subscription) }
    }

    deinit {
        for subscription in subscriptions { hub.remove(subscription) }
    }

    /// Waits until a change (or a reason to check) arrived since the last call, or `timeout` passed; returns the
    /// places (in the watched types' order) of the types that changed, `nil` when the time passed. Changes that
    /// arrive meanwhile coalesce into one.
    public func wait(for timeout: Duration) -> Set<Int>? {
        let woke =
            woken.waitThenUpdate(until: .after(timeout)) { woken -> Bool? in
                guard woken else { return nil }
                woken = false
                return true
            } ?? false
        // Cleared after the wake, so a change from now on wakes the next wait.
        var changed = Set<Int>()
        for (index, subscription) in subscriptions.enumerated()
        where subscription.dirty.exchange(false, ordering: .acquiringAndReleasing) {
            changed.insert(index)
        }
        return woke ? changed : nil
    }
}

extension HealthServer {
    /// A watch of `subject`'s samples of `types` (see ``ChangeWatch``); it ends when released.
    public func watchChanges(subject: String, types: [QuantityType]) -> ChangeWatch {
        ChangeWatch(hub: subscriptions, subject: subject, types: types)
    }
}
