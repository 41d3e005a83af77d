// One thread running epoll_wait, with a task queue woken by an eventfd, and timers.
import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a registration wants to hear about.
public struct Interest: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt8
    /// An interest from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Tell me when the fd can be read (or has hung up).
    public static let readable = Interest(rawValue: 1)
    /// Tell me when the fd can be written.
    public static let writable = Interest(rawValue: 2)

    var epollMask: UInt32 {
        (contains(.readable) ? HK_EPOLLIN : 0) | (contains(.writable) ? HK_EPOLLOUT : 0)
    }
}

/// What epoll reported for a registered fd. Errors and hang-ups are reported whatever the interest.
public struct IOEvents: OptionSet, Sendable, Hashable {
    /// The epoll event bits.
    public let rawValue: UInt32
    /// Events from epoll bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Data (or end of stream) can be read.
    public static let readable = IOEvents(rawValue: HK_EPOLLIN)
    /// The fd can be written.
    public static let writable = IOEvents(rawValue: HK_EPOLLOUT)
    /// The fd has a pending error (EPOLLERR).
    public static let error = IOEvents(rawValue: HK_EPOLLERR)
    /// Both directions are closed (EPOLLHUP).
    public static let hangup = IOEvents(rawValue: HK_EPOLLHUP)
}

/// Identifies one registration of an fd on one loop.
public struct RegistrationID: Hashable, Sendable {
    let token: UInt64
}

/// An event loop: one thread waiting in epoll_wait and running fd callbacks, submitted tasks and timers.
///
/// Threading: `execute`, `schedule`, `inEventLoop` and `shutdown` may be called from any thread;
/// `register`/`modify`/`deregister` only on the loop's own thread. Callbacks and tasks run on the loop thread
/// and must never block. Loop-confined state lives in plain `var`s that only the loop thread touches, which is
/// why the class is `@unchecked Sendable`.
public final class EventLoop: @unchecked Sendable, CustomStringConvertible {
    /// The loop's name (also its thread's name).
    public let name: String
    private let epollFD: Int32
    private let wakeFD: Int32
    private let shared = ConditionLock(SharedState())
    private let wakePending = Atomic<Bool>(false)
    private let loopThreadID = Atomic<UInt>(0)
    private let thread = ConditionLock<PosixThread?>(nil)
    private let cancellations = CancellationCounter()

    // Loop-confined state.
    private var registrations: [UInt64: Registration] = [:]
    private var nextToken: UInt64 = 1
    private var closingRegistrations = false
    /// A scratch buffer for socket reads, shared by every connection of this loop (loop thread only).
    let readBuffer: UnsafeMutableRawBufferPointer

    private struct SharedState {
        var tasks: [@Sendable () -> Void] = []
        var timers = TimerHeap()
        var nextSequence: UInt64 = 0
        var phase = Phase.running
    }

    private enum Phase { case running, stopping, stopped }

    private final class Registration {
        let fd: Int32
        var interest: Interest
        let onEvent: (IOEvents) -> Void
        let onLoopShutdown: () -> Void

        init(fd: Int32, interest: Interest, onEvent: @escaping (IOEvents) -> Void, onLoopShutdown: @escaping () -> Void)
        {
            self.fd = fd
            self.interest = interest
            self.onEvent = onEvent
            self.onLoopShutdown = onLoopShutdown
        }
    }

    /// Creates the loop and starts its thread.
    public init(name: String = "hk-loop", readBufferSize: Int = 64 * 1024) throws(SystemError) {
        self.name = name
        epollFD = try Sys.epollCreate()
        do {
            wakeFD = try Sys.eventFD()
        } catch {
            try? Sys.close(epollFD)
            throw error
        }
        readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
        try Sys.epollControl(epollFD, op: HK_EPOLL_CTL_ADD, fd: wakeFD, events: HK_EPOLLIN, token: 0)
        // The thread keeps the loop alive until it returns (after shutdown()).
        let started = try PosixThread.spawn(name: name) { self.run() }
        thread.withLock { $0 = started }
    }

    deinit {
        try? Sys.close(wakeFD)
        try? Sys.close(epollFD)
        readBuffer.deallocate()
    }

    /// `EventLoop(<name>)`.
    public var description: String { "EventLoop(\(name))" }

    /// Whether the calling thread is this loop's thread.
    public var inEventLoop: Bool { loopThreadID.load(ordering: .acquiring) == PosixThread.currentID }

    // MARK: Tasks and timers (any thread)

    /// Runs `task` on the loop thread, after the tasks submitted before it (FIFO per submitting thread).
    /// Returns false, dropping the task, when the loop has shut down.
    @discardableResult
    public func execute(_ task: @escaping @Sendable () -> Void) -> Bool {
        let accepted = shared.withLock { state in
            guard state.phase != .stopped else { return false }
            state.tasks.append(task)
            return true
        }
        if accepted { wakeUp() }
        return accepted
    }

    /// Runs `task` on the loop thread once `delay` has passed; cancel it with the returned handle.
    /// Timers still pending when the loop shuts down never run.
    @discardableResult
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        schedule(at: .after(delay), task)
    }

    /// Runs `task` on the loop thread at `deadline`; cancel it with the returned handle.
    @discardableResult
    public func schedule(at deadline: Deadline, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        let scheduled = shared.withLock { state in
            state.nextSequence += 1
            let scheduled = ScheduledTask(
                deadline: deadline, sequence: state.nextSequence, cancellations: cancellations, task: task)
            if state.phase != .stopped { state.timers.push(scheduled) } else { _ = scheduled.take() }
            return scheduled
        }
        wakeUp()
        return scheduled
    }

    /// Runs `body` on the loop thread and waits for its result (directly when already on the loop thread).
    /// Blocks the caller: use it for setup and tests, never from another loop's thread.
    public func submitAndWait<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        if inEventLoop { return try body() }
        let outcome = ConditionLock<Result<T, any Error>?>(nil)
        let accepted = execute {
            let result = Result { try body() }
            outcome.update { $0 = result }
        }
        guard accepted else { throw SystemError(code: ECANCELED, call: "execute", message: "event loop shut down") }
        return try outcome.wait { $0 }!.get()
    }

    /// Stops the loop: runs the tasks already submitted, tells every remaining registration that the loop is
    /// shutting down (connections close), then joins the thread. Idempotent; must not run on the loop thread.
    public func shutdown() {
        precondition(!inEventLoop, "EventLoop.shutdown() called on its own thread")
        shared.withLock { state in
            if state.phase == .running { state.phase = .stopping }
        }
        wakeUp(force: true)
        let running = thread.withLock { $0 }
        running?.join()
    }

    /// Wakes the loop from epoll_wait, unless a wake-up is already pending or the caller is the loop itself.
    private func wakeUp(force: Bool = false) {
        if !force && inEventLoop { return }
        if wakePending.exchange(true, ordering: .acquiringAndReleasing) && !force { return }
        do {
            try Sys.eventFDSignal(wakeFD)
        } catch {
            preconditionFailure("eventfd write failed: \(error)")
        }
    }

    // MARK: Registrations (loop thread only)

    /// Registers `fd` for `interest`; `onEvent` runs on the loop thread for each readiness report, and
    /// `onLoopShutdown` runs if the loop shuts down while the fd is still registered (close it there).
    /// The loop never closes fds itself. Level-triggered: keep interest only in what you will act on.
    public func register(
        fd: Int32, interest: Interest, onEvent: @escaping (IOEvents) -> Void,
        onLoopShutdown: @escaping () -> Void
    ) throws(SystemError) -> RegistrationID {
        precondition(inEventLoop, "EventLoop.register called off the loop thread")
        if closingRegistrations {
            throw SystemError(code: ECANCELED, call: "register", message: "event loop shut down")
        }
        let token = nextToken
        nextToken += 1
        try Sys.epollControl(epollFD, op: HK_EPOLL_CTL_ADD, fd: fd, events: interest.epollMask, token: token)
        registrations[token] = Registration(
            fd: fd, interest: interest, onEvent: onEvent, onLoopShutdown: onLoopShutdown)
        return RegistrationID(token: token)
    }

    /// Changes what a registration is interested in (no syscall when unchanged).
    public func modify(_ id: RegistrationID, interest: Interest) throws(SystemError) {
        precondition(inEventLoop, "EventLoop.modify called off the loop thread")
        guard let registration = registrations[id.token], registration.interest != interest else { return }
        try Sys.epollControl(
            epollFD, op: HK_EPOLL_CTL_MOD, fd: registration.fd, events: interest.epollMask, token: id.token)
        registration.interest = interest
    }

    /// Removes a registration (before closing its fd); no further callbacks arrive for it.
    public func deregister(_ id: RegistrationID) throws(SystemError) {
        precondition(inEventLoop, "EventLoop.deregister called off the loop thread")
        guard let registration = registrations.removeValue(forKey: id.token) else { return }
        try Sys.epollControl(epollFD, op: HK_EPOLL_CTL_DEL, fd: registration.fd, events: 0, token: id.token)
    }

    /// The number of live registrations (loop thread only; for tests and metrics).
    public var registrationCount: Int {
        precondition(inEventLoop, "EventLoop.registrationCount read off the loop thread")
        return registrations.count
    }

    // MARK: The loop

    private func run() {
        loopThreadID.store(PosixThread.currentID, ordering: .releasing)
        let capacity = 256
        let tokens = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
        let events = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity)
        defer {
            tokens.deallocate()
            events.deallocate()
        }
        while true {
            let timeout = nextTimeout()
            let ready: Int
            do {
                ready = try Sys.epollWait(
                    epollFD, tokens: tokens, events: events, max: Int32(capacity), timeoutMilliseconds: timeout)
            } catch {
                preconditionFailure("epoll_wait failed: \(error)")
            }
            for index in 0..<ready {
                let token = tokens[index]
                if token == 0 {
                    try? Sys.eventFDDrain(wakeFD)
                    wakePending.store(false, ordering: .releasing)
                } else if let registration = registrations[token] {
                    registration.onEvent(IOEvents(rawValue: events[index]))
                }
            }
            if runDueWork() { break }
        }
        closeRegistrationsAndDrain()
    }

    /// The epoll timeout: 0 with tasks queued, else until the next timer (-1: none).
    private func nextTimeout() -> Int32 {
        shared.withLock { state in
            if !state.tasks.isEmpty || state.phase != .running { return 0 }
            if cancellations.count.load(ordering: .relaxed) > max(64, state.timers.count / 2) {
                cancellations.count.store(0, ordering: .relaxed)
                state.timers.removeDone()
            }
            return state.timers.first?.deadline.pollTimeoutMilliseconds ?? -1
        }
    }

    /// Runs due timers and queued tasks; returns true when the loop should stop.
    private func runDueWork() -> Bool {
        let now = Deadline.now()
        let (tasks, due, stopping) = shared.withLock { state in
            var due: [ScheduledTask] = []
            while let first = state.timers.first, first.deadline <= now {
                due.append(state.timers.popFirst()!)
            }
            let tasks = state.tasks
            state.tasks = []
            return (tasks, due, state.phase == .stopping)
        }
        for timer in due { timer.take()?() }
        for task in tasks { task() }
        return stopping
    }

    /// After the loop stops: closes what is still registered, runs remaining tasks, drops timers.
    private func closeRegistrationsAndDrain() {
        closingRegistrations = true
        for token in registrations.keys.sorted() {
            registrations[token]?.onLoopShutdown()
        }
        for (token, registration) in registrations {
            try? Sys.epollControl(epollFD, op: HK_EPOLL_CTL_DEL, fd: registration.fd, events: 0, token: token)
        }
        registrations.removeAll()
        while true {
            let tasks = shared.withLock { state in
                let tasks = state.tasks
                state.tasks = []
                if tasks.isEmpty {
                    state.phase = .stopped
                    for timer in state.timers.items { _ = timer.take() }
                    state.timers.removeAll()
                }
                return tasks
            }
            if tasks.isEmpty { return }
            for task in tasks { task() }
        }
    }
}
