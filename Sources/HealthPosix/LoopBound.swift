// A mutable value confined to one event loop's thread, checked on every access.

/// A mutable value that belongs to one ``EventLoop``: it may be read and changed only on that loop's thread,
/// while the box itself is `Sendable`, so objects that keep their state in one can be captured by the closures
/// that hop to workers and back (modelled on NIO's `NIOLoopBoundBox`).
///
/// Threading contract:
/// - ``init(_:loop:)`` may run on any thread: the value is `sending`, so no other reference to it survives.
/// - ``value`` (read or write) only on `loop`'s thread. Every access checks `loop.inEventLoop` and stops the
///   process with a precondition failure when called from another thread; that is a bug in the caller (a
///   worker closure that touched loop state instead of hopping back with `loop.execute` first).
/// - ``loop`` from any thread.
///
/// Why `@unchecked Sendable` is sound: the only mutable storage is the value, and the value is reachable only
/// through ``value``, whose every access first checks that it runs on the loop's thread. All accesses therefore
/// happen on one thread, in program order; the value never crosses threads (what is read out of it stays on
/// the loop thread too: do not hand a non-`Sendable` part of it to another thread). This is the server path's
/// one audited unchecked conformance for loop-confined state.
///
/// Cost: one `inEventLoop` (an atomic load and `pthread_self`) per access and no allocation; ``value`` yields
/// the stored value in place, so `box.value.field.mutate()` changes it without copying. Mind exclusivity: a
/// mutation holds the whole value for its duration, so code that runs inside one (a callback invoked by a
/// mutating method) must not access the same box; read what you need into locals first.
public final class LoopBoundBox<Value>: @unchecked Sendable {
    /// The loop whose thread owns the value.
    public let loop: EventLoop
    @usableFromInline var storage: Value

    /// A box holding `value`, owned by `loop`. Callable from any thread.
    @inlinable
    public init(_ value: sending Value, loop: EventLoop) {
        self.loop = loop
        self.storage = value
    }

    /// The value: read and written in place, on `loop`'s thread only (checked).
    @inlinable
    public var value: Value {
        get {
            checkLoop()
            return storage
        }
        _modify {
            checkLoop()
            yield &storage
        }
    }

    /// Stops the process unless the caller runs on the loop's thread.
    @inlinable
    func checkLoop() {
        precondition(
            loop.inEventLoop,
            "LoopBoundBox<\(Value.self)> accessed off its event loop's thread (\(loop.name)): hop with loop.execute first"
        )
    }
}
