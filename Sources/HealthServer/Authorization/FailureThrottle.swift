import Synchronization

/// Slows down repeated authentication failures from one address: each failure within ``window`` doubles the
/// delay before the refusal is sent (from ``baseDelay`` up to ``maxDelay``); a success or a quiet window resets it.
///
/// Thread-safe (one mutex); remembers at most ``capacity`` addresses, forgetting the oldest first.
public final class FailureThrottle: Sendable {
    public let baseDelay: Duration
    public let maxDelay: Duration
    /// Failures older than this are forgotten.
    public let window: Duration
    public let capacity: Int

    private struct Entry {
        var failures: Int
        var last: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// A throttle; the defaults reach the 5 s cap after seven failures in ten minutes.
    public init(
        baseDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(5), window: Duration = .seconds(600),
        capacity: Int = 10_000
    ) {
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.window = window
        self.capacity = capacity
    }

    /// Records a failure from `address` and returns how long to wait before answering it.
    public func failed(_ address: String) -> Duration {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            var entry = entries[address] ?? Entry(failures: 0, last: now)
            if now - entry.last > window { entry.failures = 0 }
            entry.failures += 1
            entry.last = now
            if entries[address] == nil, entries.count >= capacity,
                let oldest = entries.min(by: { $0.value.last < $1.value.last })?.key
            {
                entries[oldest] = nil
            }
            entries[address] = entry
            return delay(afterFailures: entry.failures)
        }
    }

    /// Forgets `address`'s failures (it authenticated).
    public func succeeded(_ address: String) {
        _ = entries.withLock { $0.removeValue(forKey: address) }
    }

    /// The delay after `failures` consecutive failures: base × 2^(failures − 1), capped.
    public func delay(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        var delay = baseDelay
        for _ in 1..<min(failures, 32) {
            delay *= 2
            if delay >= maxDelay { return maxDelay }
        }
        return min(delay, maxDelay)
    }
}
