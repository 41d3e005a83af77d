import Synchronization

/// A server-wide cap on the request bytes held in memory at once: frames being received (reserved at their
/// declared length once the header arrives) and inflated payloads being handled. A connection that cannot
/// reserve stops reading until bytes are released (backpressure); an inflated payload that does not fit is
/// refused with the retryable ``ErrorCode/busy``. Thread-safe.
final class MemoryBudget: Sendable {
    /// Bytes that may be held at once.
    let capacity: Int
    private let used = Atomic<Int>(0)

    init(capacity: Int) { self.capacity = capacity }

    /// Bytes held now.
    var inUse: Int { used.load(ordering: .relaxed) }

    /// Reserves `bytes` if they fit; a single reservation larger than the whole budget fits an empty budget, so
    /// that one frame within the protocol's limits can always proceed.
    func tryReserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        var current = used.load(ordering: .relaxed)
        while true {
            guard current == 0 || current + bytes <= capacity else { return false }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + bytes, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back bytes reserved earlier.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        used.subtract(bytes, ordering: .acquiringAndReleasing)
    }
}
