// A fixed set of worker threads draining a bounded job queue.

/// N worker threads taking jobs from a bounded FIFO queue; `submit` refuses work when the queue is full, so
/// callers can answer "busy" instead of piling up requests. Thread-safe.
public final class WorkerPool: Sendable {
    /// The most jobs that may wait in the queue (jobs being run do not count).
    public let queueCapacity: Int
    private let queue: ConditionLock<QueueState>
    private let threads: [PosixThread]

    private struct QueueState {
        /// Jobs from `head` on are waiting; the slots before it are emptied as they are taken, so a finished
        /// job's captures (a request with its decoded batch) are released at once, not when the array compacts.
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var shuttingDown = false
        var running = 0

        var waiting: Int { jobs.count - head }

        mutating func popFirst() -> (@Sendable () -> Void)? {
            guard head < jobs.count else { return nil }
            let job = jobs[head].take()
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    /// Starts `threads` workers named `name-0`, … with room for `queueCapacity` waiting jobs.
    public init(threads: Int, queueCapacity: Int, name: String = "hk-worker") throws(SystemError) {
        precondition(threads > 0 && queueCapacity >= 0, "WorkerPool needs threads > 0 and queueCapacity >= 0")
        self.queueCapacity = queueCapacity
        let queue = ConditionLock(QueueState())
        self.queue = queue
        var started: [PosixThread] = []
        do throws(SystemError) {
            for index in 0..<threads {
                started.append(try PosixThread.spawn(name: "\(name)-\(index)") { Self.work(queue) })
            }
        } catch {
            queue.update { $0.shuttingDown = true }
            for thread in started { thread.join() }
            throw error
        }
        self.threads = started
    }

    /// Queues `job` to run on a worker thread; false (job dropped) when the queue is full or shutting down.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        queue.update { state in
            guard !state.shuttingDown, state.waiting < queueCapacity else { return false }
            state.jobs.append(job)
            return true
        }
    }

    /// Jobs waiting to start.
    public var waitingCount: Int { queue.withLock { $0.waiting } }

    /// Jobs running right now.
    public var runningCount: Int { queue.withLock { $0.running } }

    /// Refuses new jobs, lets the workers finish every queued one, and joins them. Idempotent; not from a
    /// worker thread.
    public func shutdown() {
        queue.update { $0.shuttingDown = true }
        for thread in threads { thread.join() }
    }

    private static func work(_ queue: ConditionLock<QueueState>) {
        while true {
            let next: (@Sendable () -> Void)? = queue.wait { state in
                if let job = state.popFirst() {
                    state.running += 1
                    return .some(job)
                }
                return state.shuttingDown ? .some(nil) : nil
            }!
            guard let job = next else { return }
            job()
            queue.withLock { $0.running -= 1 }
        }
    }
}
