/// A thread that runs `body` every `interval` until ``stop()``; for background chores (refreshing a shared
/// table, renewing something) that must not run on an event loop because they block.
public final class PeriodicThread: Sendable {
    private let stopping = ConditionLock(false)
    private let thread: PosixThread

    /// Starts the thread; the first run comes one `interval` from now.
    public init(name: String, every interval: Duration, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let stopping = stopping
        thread = try PosixThread.spawn(name: name) {
            while stopping.wait(until: .after(interval), { $0 ? true : nil }) == nil { body() }
        }
    }

    /// Stops the thread and waits for a run in progress to finish. Idempotent.
    public func stop() {
        stopping.update { $0 = true }
        thread.join()
    }
}
