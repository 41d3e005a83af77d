import Glibc

/// Runs the jobs of the tasks that prefer it on the thread that calls ``run()``: hkq's command, on the process's
/// main thread. A task started without it runs on Swift's global executor, whose dispatch threads are created at
/// the first job (three of them for hkq's one task), each costing a short command about a tenth of a millisecond.
///
/// Tasks the command starts unstructured (an import's uploads) still run on the global executor; its structured
/// children share this one thread.
final class MainThreadExecutor: TaskExecutor, @unchecked Sendable {
    // Pointers, not stored properties: pthread objects must not move, and `&property` promises no fixed address.
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wakeUp = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// The jobs to run, oldest first; guarded by `lock`.
    private var jobs: [UnownedJob] = []

    init() {
        pthread_mutex_init(lock, nil)
        pthread_cond_init(wakeUp, nil)
    }

    /// Queues `job` for the running thread (from any thread: the connection's reader resumes commands).
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(lock)
        jobs.append(job)
        pthread_cond_signal(wakeUp)
        pthread_mutex_unlock(lock)
    }

    /// Runs jobs as they come, for good: the command ends the process with `exit`.
    func run() -> Never {
        var next = 0
        var batch: [UnownedJob] = []
        while true {
            if next == batch.count {
                pthread_mutex_lock(lock)
                while jobs.isEmpty { pthread_cond_wait(wakeUp, lock) }
                swap(&batch, &jobs)
                jobs.removeAll(keepingCapacity: true)
                pthread_mutex_unlock(lock)
                next = 0
            }
            let job = batch[next]
            next += 1
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
