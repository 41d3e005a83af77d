#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a reader-writer lock: any number of concurrent readers, or one writer.
///
/// This is the engine's only `@unchecked Sendable`: the value is reachable only through ``read(_:)`` and
/// ``write(_:)``, which hold the lock for the whole closure, and the `pthread_rwlock_t` lives on the heap because
/// it must never move. On glibc the lock prefers writers, so a steady stream of queries cannot starve ingest.
/// The lock is not recursive: a closure must not call back into the same lock.
final class ReadWriteLocked<Value: Sendable>: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        lock = .allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
            pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        let status = pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        precondition(status == 0, "pthread_rwlock_init failed: \(status)")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with shared access; other readers may run at the same time, writers wait.
    func read<Result>(_ body: (borrowing Value) throws -> Result) rethrows -> Result {
        let status = pthread_rwlock_rdlock(lock)
        precondition(status == 0, "pthread_rwlock_rdlock failed: \(status)")
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// Runs `body` with exclusive access; the value is mutated in place.
    func write<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        let status = pthread_rwlock_wrlock(lock)
        precondition(status == 0, "pthread_rwlock_wrlock failed: \(status)")
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
