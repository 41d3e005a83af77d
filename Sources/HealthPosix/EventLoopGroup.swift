// A fixed set of event loops handed out round-robin.
import Synchronization

/// N event loops, each on its own thread; `next()` hands them out in turn. Thread-safe.
public final class EventLoopGroup: Sendable {
    /// The loops, in round-robin order.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

    /// Starts `threads` loops (default: one per online processor) named `name-0`, `name-1`, …
    public init(threads: Int = PosixThread.processorCount, name: String = "hk-loop") throws(SystemError) {
        var loops: [EventLoop] = []
        do throws(SystemError) {
            for index in 0..<max(1, threads) { loops.append(try EventLoop(name: "\(name)-\(index)")) }
        } catch {
            for loop in loops { loop.shutdown() }
            throw error
        }
        self.loops = loops
    }

    /// The next loop in round-robin order.
    public func next() -> EventLoop {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: index) % UInt(loops.count))]
    }

    /// Shuts every loop down (see `EventLoop.shutdown()`) and joins their threads. Not from a loop thread.
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }
}
