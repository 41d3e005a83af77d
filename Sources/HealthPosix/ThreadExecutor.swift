#if canImport(Glibc)
    import Glibc
#endif

/// Runs the jobs of the tasks that prefer it (`Task(executorPreference:)`) on the thread that calls ``run()``:
/// hkq's command on the process's main thread, or a test's tasks on a thread of its own. A task started without
/// it runs on Swift's global executor, whose dispatch threads are created at the first job (three of them for
/// hkq's one task), a cost a short command's start notices.
///
/// Tasks started unstructured from such a task (an import's uploads) still run on the global executor; its
/// structured children share the one thread. A client connection opened in place on the thread reads its
/// replies there too (`HealthClient.connectInPlace`).
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // Pointers, not stored properties: pthread objects must not move, and `&property` promises no fixed address.
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wakeUp = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// The jobs to run, oldest first; guarded by `lock`.
    private var jobs: [UnownedJob] = []
    /// Set by ``stop()``; guarded by `lock`.
    private var stopping = false

    public init() {
        pthread_mutex_init(lock, nil)
        pthread_cond_init(wakeUp, nil)
    }

    deinit {
        pthread_cond_destroy(wakeUp)
        pthread_mutex_destroy(lock)
        wakeUp.deallocate()
        lock.deallocate()
    }

    /// Queues `job` for the running thread (from any thread: a connection's reader resumes tasks).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(lock)
        jobs.append(job)
        pthread_cond_signal(wakeUp)
        pthread_mutex_unlock(lock)
    }

    /// Runs jobs as they come until ``stop()`` was called and none is left (hkq's command never stops it: it
    /// ends the process with `exit`).
    public func run() {
        var next = 0
        var batch: [UnownedJob] = []
        while true {
            if next == batch.count {
                pthread_mutex_lock(lock)
                while jobs.isEmpty, !stopping { pthread_cond_wait(wakeUp, lock) }
                if jobs.isEmpty {
                    pthread_mutex_unlock(lock)
                    return
                }
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

    /// Makes ``run()`` return once it has no job left (call it from the last job, or from another thread).
    public func stop() {
        pthread_mutex_lock(lock)
        stopping = true
        pthread_cond_signal(wakeUp)
        pthread_mutex_unlock(lock)
    }
}
