import HealthPosix

/// The thread that computes subscription updates, shared by every server in the process, apart from the workers
/// serving requests: updates never queue in front of inserts and queries (with 100 subscribers a change meant
/// 100 jobs ahead of the next insert). Under load an update waits, and the changes meanwhile coalesce into it:
/// each subscription has at most one computation queued, so the queue holds at most one job per subscription.
///
/// It runs at normal priority: a lower one (nice +10) starved updates whenever other processes kept the cores
/// busy, which broke the stalled-subscriber cut-off.
enum UpdateWorker {
    /// The update thread's queue; nil when no thread could be started (callers then use the server's workers).
    static let pool: WorkerPool? = try? WorkerPool(threads: 1, queueCapacity: 1 << 16, name: "hkd-updates")
}
