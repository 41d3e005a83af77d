// Joinable pthreads started with a Sendable closure.
import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A joinable pthread. The closure travels through pthread_create's `void*` argument (a capturing closure
/// passed to pthread_create directly crashes the Swift 6 compiler).
public final class PosixThread: Sendable {
    private let handle: pthread_t
    private let joined = Atomic<Bool>(false)

    private init(handle: pthread_t) { self.handle = handle }

    /// Starts a thread named `name` (the kernel keeps the first 15 bytes) running `body`.
    public static func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) -> PosixThread {
        let context = Unmanaged.passRetained(ThreadContext(name: name, body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                let context = Unmanaged<ThreadContext>.fromOpaque(argument!).takeRetainedValue()
                hk_set_thread_name(context.name)
                context.body()
                return nil
            }, context)
        if result != 0 {
            Unmanaged<ThreadContext>.fromOpaque(context).release()
            throw SystemError(errno: result, call: "pthread_create")
        }
        return PosixThread(handle: handle)
    }

    /// Starts a detached thread named `name` running `body`: nobody joins it, its resources go when `body`
    /// returns (work whose end its caller learns otherwise, e.g. a streamed HTTP response).
    public static func detach(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let thread = try spawn(name: name, body)
        if thread.joined.exchange(true, ordering: .acquiringAndReleasing) { return }
        _ = pthread_detach(thread.handle)
    }

    /// Waits for the thread to finish; later calls return at once. Must not be called from the thread itself.
    public func join() {
        precondition(!isCurrent, "a thread cannot join itself")
        if joined.exchange(true, ordering: .acquiringAndReleasing) { return }
        _ = pthread_join(handle, nil)
    }

    /// Whether the calling thread is this thread.
    public var isCurrent: Bool { pthread_equal(pthread_self(), handle) != 0 }

    /// Sends `signal` to this thread only (pthread_kill).
    public func send(signal: Int32) throws(SystemError) {
        let result = pthread_kill(handle, signal)
        if result != 0 { throw SystemError(errno: result, call: "pthread_kill") }
    }

    /// An identifier of the calling thread, equal for the same thread and different between live threads.
    public static var currentID: UInt { UInt(pthread_self()) }

    /// The number of online processors (at least 1).
    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}

/// What a new thread runs; owned by the thread once started.
private final class ThreadContext {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
