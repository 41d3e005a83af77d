import Synchronization

/// The connections still in their handshake, server-wide, so that peers which never authenticate cannot hold
/// every slot (slowloris).
///
/// Beyond the quota, a new connection is still let in, and the oldest connection that has been in its
/// handshake for at least ``grace`` is closed instead: a burst of legitimate clients (all young) is never
/// refused, while connections that linger are the ones to go. The metrics endpoint keeps its connections that
/// wait for their request in one too, with no grace. Thread-safe.
final class HandshakeQuota: Sendable {
    /// How many connections may be in their handshake before the oldest lingering one is closed.
    let limit: Int
    /// How long a connection may be in its handshake before it counts as lingering.
    let grace: Duration
    private struct Entry {
        var since: ContinuousClock.Instant
        var evict: @Sendable () -> Void
    }
    private let entries = Mutex<[UInt64: Entry]>([:])

    init(limit: Int, grace: Duration = .seconds(1)) {
        self.limit = max(1, limit)
        self.grace = grace
    }

    /// Connections in their handshake now.
    var count: Int { entries.withLock { $0.count } }

    /// Connection `id` began its handshake; `evict` closes it (from any thread). Returns, and removes from the
    /// quota, the eviction of the oldest lingering connection when the quota is exceeded; the caller runs it
    /// outside the lock.
    func enter(_ id: UInt64, now: ContinuousClock.Instant = .now, evict: @escaping @Sendable () -> Void)
        -> (@Sendable () -> Void)?
    {
        entries.withLock { entries in
            entries[id] = Entry(since: now, evict: evict)
            guard entries.count > limit,
                let oldest = entries.min(by: { $0.value.since < $1.value.since }),
                oldest.key != id, now - oldest.value.since >= grace
            else { return nil }
            entries[oldest.key] = nil
            return oldest.value.evict
        }
    }

    /// Connection `id` finished its handshake or closed.
    func leave(_ id: UInt64) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }
}
