import HealthPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The thread that computes subscription updates, shared by every server in the process. It runs at a lower
/// scheduling priority (nice +10) than the workers serving inserts and queries, so updates take the CPU time
/// those leave over instead of queueing in front of them: under load an update waits, and the changes meanwhile
/// coalesce into it (each subscription has at most one computation queued).
enum UpdateWorker {
    /// The niceness of the update thread (Linux keeps nice values per thread).
    static let niceness: Int32 = 0

    /// The update thread's queue; nil when no thread could be started (callers then use the server's workers).
    static let pool: WorkerPool? = {
        guard let pool = try? WorkerPool(threads: 1, queueCapacity: 1 << 16, name: "hkd-updates") else { return nil }
        // The first job runs on the pool's only thread: who = 0 is the calling thread.
        pool.submit { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
        return pool
    }()
}
