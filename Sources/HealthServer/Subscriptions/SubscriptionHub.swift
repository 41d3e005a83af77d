import HealthModel
import Synchronization

/// One live subscription as the hub sees it: what it watches and how to wake its connection.
///
/// Thread-safe: `dirty` is atomic, `wake` may be called from any thread.
final class LiveSubscription: Sendable {
    let subject: String
    let typeIndex: Int
    /// Set when a change arrived that the subscription has not computed yet; the connection clears it when it
    /// starts computing, so changes arriving faster than updates are sent coalesce into one.
    let dirty = Atomic<Bool>(false)
    /// Asks the owning connection (on its loop) to compute an update.
    let wake: @Sendable () -> Void

    init(subject: String, typeIndex: Int, wake: @escaping @Sendable () -> Void) {
        self.subject = subject
        self.typeIndex = typeIndex
        self.wake = wake
    }

    /// Marks the subscription dirty; wakes the connection only on the clean → dirty transition.
    func markDirty() {
        if dirty.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged { wake() }
    }
}

/// Every live subscription of the server, by type and subject: changes mark the matching ones dirty.
///
/// Thread-safe: one mutex held only to copy the matching list (never while waking).
public final class SubscriptionHub: Sendable {
    private struct Key: Hashable {
        var typeIndex: Int
        var subject: String
    }

    private let entries = Mutex<[Key: [ObjectIdentifier: LiveSubscription]]>([:])
    private let total = Atomic<Int>(0)
    /// Live-collection steps shared by subscriptions with the same query.
    let collectionSteps = CollectionStepCache()

    /// An empty hub.
    public init() {}

    /// Live subscriptions on every connection.
    public var count: Int { total.load(ordering: .relaxed) }

    func add(_ subscription: LiveSubscription) {
        let key = Key(typeIndex: subscription.typeIndex, subject: subscription.subject)
        entries.withLock { $0[key, default: [:]][ObjectIdentifier(subscription)] = subscription }
        total.add(1, ordering: .relaxed)
    }

    func remove(_ subscription: LiveSubscription) {
        let key = Key(typeIndex: subscription.typeIndex, subject: subscription.subject)
        let removed = entries.withLock { entries -> Bool in
            let gone = entries[key]?.removeValue(forKey: ObjectIdentifier(subscription)) != nil
            if entries[key]?.isEmpty == true { entries[key] = nil }
            return gone
        }
        if removed { total.subtract(1, ordering: .relaxed) }
    }

    /// Marks every subscription whose subject `matches` dirty, whatever its type: each computes its next update,
    /// which checks again that this node may serve it (cluster mode: a node that no longer holds the subject's
    /// partition ends the subscription, and the client subscribes again at the new owner from its last anchor).
    public func wake(subjects matches: (String) -> Bool) {
        guard count > 0 else { return }
        let matching = entries.withLock { entries in
            entries.filter { matches($0.key.subject) }.values.flatMap { Array($0.values) }
        }
        for subscription in matching { subscription.markDirty() }
    }

    /// A subject's samples of a type changed (durably): marks the subscriptions watching them dirty.
    public func changed(subject: String, type: String) {
        guard count > 0, let quantityType = try? QuantityType.named(type) else { return }
        let matching = entries.withLock {
            $0[Key(typeIndex: quantityType.index, subject: subject)].map { Array($0.values) }
        }
        for subscription in matching ?? [] { subscription.markDirty() }
    }
}
