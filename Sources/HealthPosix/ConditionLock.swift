// A mutex with a condition variable on the monotonic clock, guarding a value.
#if canImport(Glibc)
    import Glibc
#endif

/// A value guarded by a pthread mutex, with a condition variable to wait for changes to it.
///
/// Thread-safe. `wait` blocks the calling thread: never call it on an event-loop thread or in async code.
/// HealthPosix uses it instead of `Synchronization.Mutex` because ThreadSanitizer sees pthread mutexes but not
/// Mutex's raw futex calls (which it reports as races). This is the one place in HealthPosix where
/// `@unchecked Sendable` covers raw pthread state.
public final class ConditionLock<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    /// A lock guarding `state`.
    public init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the state locked. Waiters are not woken: change what they wait for with `update`.
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Runs `body` with the state locked, then wakes every waiter so it can recheck its condition.
    public func update<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Waits until `body` returns non-nil (it runs with the state locked, first at once and then after each
    /// `update`) or until `deadline`; returns body's result, or nil on timeout. Waiters are not woken: a body
    /// that changes what others wait for belongs in ``waitThenUpdate(until:_:)``.
    public func wait<R>(until deadline: Deadline = .distantFuture, _ body: (inout State) throws -> R?) rethrows -> R? {
        try wait(until: deadline, waking: false, body)
    }

    /// ``wait(until:_:)`` for a body that changes the state once its condition holds: when it returns a result
    /// (or throws), every waiter is woken as after `update`.
    public func waitThenUpdate<R>(until deadline: Deadline = .distantFuture, _ body: (inout State) throws -> R?)
        rethrows -> R?
    {
        try wait(until: deadline, waking: true, body)
    }

    private func wait<R>(until deadline: Deadline, waking: Bool, _ body: (inout State) throws -> R?) rethrows -> R? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            do {
                if let result = try body(&state) {
                    if waking { pthread_cond_broadcast(condition) }
                    return result
                }
            } catch {
                if waking { pthread_cond_broadcast(condition) }
                throw error
            }
            if deadline == .distantFuture {
                pthread_cond_wait(condition, mutex)
            } else {
                if deadline.hasExpired { return nil }
                var until = timespec(
                    tv_sec: Int(deadline.nanoseconds / 1_000_000_000),
                    tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &until)
            }
        }
    }
}
