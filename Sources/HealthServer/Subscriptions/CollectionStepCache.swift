import HealthEngine
import HealthWire
import Synchronization

/// Recent live-collection steps, shared by subscriptions with the same query: when many clients watch the same
/// collection, the buckets a change touched are computed once, not once per subscriber.
///
/// A step is keyed by the query and the anchors it covers; it may hold data newer than its end anchor (the
/// store moved on while it was computed), which only makes it more current: every later change still
/// triggers a further step. Thread-safe; bounded to ``capacity`` entries (cleared when full).
final class CollectionStepCache: Sendable {
    struct Key: Hashable, Sendable {
        var query: CollectionQuery
        var from: UInt64
        var to: UInt64
    }

    static let capacity = 256
    private let steps = Mutex<[Key: [UpdateContent]]>([:])

    /// The cached updates for `key`, or computes, stores and returns them.
    func updates(_ key: Key, compute: () throws -> [UpdateContent]) rethrows -> [UpdateContent] {
        if let cached = steps.withLock({ $0[key] }) { return cached }
        let computed = try compute()
        steps.withLock { steps in
            if steps.count >= CollectionStepCache.capacity { steps.removeAll(keepingCapacity: true) }
            steps[key] = computed
        }
        return computed
    }
}
