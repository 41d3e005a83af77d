import Synchronization

/// A counter that any thread may add to.
public final class Counter: Sendable {
    private let storage = Atomic<UInt64>(0)

    /// A counter at 0.
    public init() {}

    /// Adds `amount`.
    public func add(_ amount: UInt64 = 1) { storage.add(amount, ordering: .relaxed) }

    /// The count so far.
    public var value: UInt64 { storage.load(ordering: .relaxed) }
}

/// A histogram of durations (or any non-negative amounts) with fixed bucket bounds, as Prometheus exposes them:
/// cumulative counts per upper bound, a count and a sum. Lock-free; any thread may observe.
public final class Histogram: Sendable {
    /// The buckets' upper bounds, ascending (`+Inf` is implied).
    public let bounds: [Double]
    private let counts: [Counter]
    private let total = Counter()
    /// The sum in millionths, so that it accumulates atomically.
    private let sumMicros = Counter()

    /// A histogram over `bounds` (ascending).
    public init(bounds: [Double]) {
        self.bounds = bounds
        counts = bounds.map { _ in Counter() }
    }

    /// Bounds for latencies from 50 µs to 10 s.
    public static let latencyBounds: [Double] = [
        0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    /// Records one observation.
    public func observe(_ value: Double) {
        total.add()
        sumMicros.add(UInt64(max(0, value * 1_000_000).rounded()))
        if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index].add() }
    }

    /// Records the time from `start` until now, in seconds.
    public func observeSince(_ start: Deadline) {
        observe(Double(Deadline.now().nanoseconds &- start.nanoseconds) / 1e9)
    }

    /// Cumulative counts per bound, then the count and the sum.
    public var snapshot: (cumulative: [UInt64], count: UInt64, sum: Double) {
        var running: UInt64 = 0
        let cumulative = counts.map { counter -> UInt64 in
            running += counter.value
            return running
        }
        return (cumulative, total.value, Double(sumMicros.value) / 1_000_000)
    }
}
