// Waiting for termination signals on a thread of our choosing.
#if canImport(Glibc)
    import Glibc
#endif

/// A set of signals to receive synchronously with `sigwait` instead of through handlers.
///
/// Usage in hkd: call `block()` first thing in main (threads started later inherit the mask, so no other
/// thread ever takes these signals), start the server, then `wait()` on the main thread and shut down.
public struct SignalSet: Sendable {
    /// The signal numbers.
    public let signals: [Int32]

    /// A set of the given signal numbers.
    public init(_ signals: [Int32]) { self.signals = signals }

    /// SIGINT and SIGTERM.
    public static let termination = SignalSet([SIGINT, SIGTERM])

    /// SIGPIPE. Blocked in every thread, a write to a socket or pipe whose peer is gone fails with EPIPE instead
    /// of ending the process without a word: libraries (nats.c, OpenSSL) may write without `MSG_NOSIGNAL`.
    public static let brokenPipe = SignalSet([SIGPIPE])

    /// Blocks the signals in the calling thread and in every thread it starts afterwards.
    public func block() throws(SystemError) { try Sys.blockSignals(signals) }

    /// Waits until one of the (blocked) signals arrives and returns its number. Blocks the calling thread.
    public func wait() throws(SystemError) -> Int32 { try Sys.waitForSignal(signals) }

    /// Waits up to `timeout` until one of the (blocked) signals arrives and returns its number; `nil` when none
    /// came in time. Blocks the calling thread.
    public func wait(timeout: Duration) throws(SystemError) -> Int32? {
        try Sys.waitForSignal(signals, timeout: timeout)
    }

    /// Starts a thread that blocks the signals for itself, waits for one, and calls `handler` with it once.
    /// Returns once the signals are blocked in that thread. Only signals directed at that thread, or
    /// process-directed ones while every other thread blocks them, reach it.
    public func watch(name: String = "hk-signals", _ handler: @escaping @Sendable (Int32) -> Void) throws(SystemError)
        -> PosixThread
    {
        let signals = self
        let blocked = ConditionLock<Result<Void, SystemError>?>(nil)
        let thread = try PosixThread.spawn(name: name) {
            let outcome = Result { () throws(SystemError) in try signals.block() }
            blocked.update { $0 = outcome }
            guard case .success = outcome else { return }
            while true {
                if let received = try? signals.wait() {
                    handler(received)
                    return
                }
            }
        }
        if case .failure(let error) = blocked.wait(until: .distantFuture, { $0 })! {
            thread.join()
            throw error
        }
        return thread
    }
}
