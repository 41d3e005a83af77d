import HealthEngine
import HealthWire
import Synchronization

/// Recent live-collection steps, shared by subscriptions with the same query: when many clients watch the same
/// collection, the buckets changed since an anchor are found and computed once, not once per subscriber.
///
/// A step is keyed by the query and the anchor it starts from (only steps that reach a later anchor are kept:
/// one that found nothing must not stand for changes that came after it), and holds the anchor it reaches and its updates
/// (which may hold data newer than that anchor: the store moved on while they were computed, which only makes
/// them more current). A subscriber that takes a step moves to its end anchor, so subscribers of one query
/// stay in step with each other. Thread-safe; bounded to ``capacity`` entries (cleared when full).
final class CollectionStepCache: Sendable {
    struct Key: Hashable, Sendable {
        var query: CollectionQuery
        var from: UInt64
    }

    /// A computed step: its updates and the anchor it reaches.
    struct Step: Sendable {
        var updates: [UpdateContent]
        var anchor: UInt64
    }

    static let capacity = 256
    private let steps = Mutex<[Key: Step]>([:])

    /// The step computed from `key`'s anchor, if one is kept.
    func step(_ key: Key) -> Step? {
        steps.withLock { $0[key] }
    }

    /// Keeps `step` for `key`.
    func store(_ key: Key, _ step: Step) {
        steps.withLock { steps in
            if steps.count >= CollectionStepCache.capacity { steps.removeAll(keepingCapacity: true) }
            steps[key] = step
        }
    }
}
