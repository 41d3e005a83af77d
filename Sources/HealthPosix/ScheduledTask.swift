// Timers of an event loop: cancellable handles and the min-heap that orders them.
import Synchronization

/// A task scheduled on an event loop for a deadline; `cancel()` from any thread stops it if it has not run.
public final class ScheduledTask: Sendable {
    /// When the task is due.
    public let deadline: Deadline
    let sequence: UInt64
    private let task: ConditionLock<(@Sendable () -> Void)?>
    private let cancellations: CancellationCounter

    init(deadline: Deadline, sequence: UInt64, cancellations: CancellationCounter, task: @escaping @Sendable () -> Void)
    {
        self.deadline = deadline
        self.sequence = sequence
        self.cancellations = cancellations
        self.task = ConditionLock(task)
    }

    /// Prevents the task from running; does nothing if it already ran or was cancelled. Thread-safe.
    public func cancel() {
        if take() != nil { cancellations.count.add(1, ordering: .relaxed) }
    }

    /// Whether the task has run or been cancelled.
    public var isDone: Bool { task.withLock { $0 == nil } }

    /// Removes and returns the task (nil when it already ran or was cancelled).
    func take() -> (@Sendable () -> Void)? {
        task.withLock { task in
            defer { task = nil }
            return task
        }
    }

    /// Orders tasks by deadline, then by scheduling order.
    func runsBefore(_ other: ScheduledTask) -> Bool {
        (deadline, sequence) < (other.deadline, other.sequence)
    }
}

/// Counts cancelled timers still in a loop's heap, so the loop knows when to sweep them out.
final class CancellationCounter: Sendable {
    let count = Atomic<Int>(0)
}

/// A binary min-heap of scheduled tasks, earliest first.
struct TimerHeap {
    private(set) var items: [ScheduledTask] = []

    /// The earliest task, if any.
    var first: ScheduledTask? { items.first }

    /// The number of tasks, cancelled ones included.
    var count: Int { items.count }

    /// Adds a task.
    mutating func push(_ task: ScheduledTask) {
        items.append(task)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].runsBefore(items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest task.
    mutating func popFirst() -> ScheduledTask? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let first = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count && items[left].runsBefore(items[smallest]) { smallest = left }
            if right < items.count && items[right].runsBefore(items[smallest]) { smallest = right }
            if smallest == parent { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    /// Drops cancelled (or already run) tasks and restores the heap order.
    mutating func removeDone() {
        let live = items.filter { !$0.isDone }
        items = []
        items.reserveCapacity(live.count)
        for task in live { push(task) }
    }

    /// Removes every task.
    mutating func removeAll() { items.removeAll() }
}
