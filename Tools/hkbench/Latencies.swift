import Foundation

/// Durations of many runs of one operation, summarised as median and 99th percentile.
struct Latencies: Sendable {
    /// Every run's duration in seconds, in the order measured.
    private(set) var seconds: [Double] = []

    /// Times `work` `runs` times after `warmup` untimed runs.
    static func measure(runs: Int, warmup: Int = 10, _ work: () throws -> Void) rethrows -> Latencies {
        for _ in 0..<warmup { try work() }
        var latencies = Latencies()
        latencies.seconds.reserveCapacity(runs)
        let clock = ContinuousClock()
        for _ in 0..<runs { latencies.add(try clock.measure(work)) }
        return latencies
    }

    /// Adds one run.
    mutating func add(_ duration: Duration) {
        seconds.append(Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18)
    }

    /// The value below which `fraction` of the runs lie (nearest rank).
    func percentile(_ fraction: Double) -> Double {
        guard !seconds.isEmpty else { return .nan }
        let sorted = seconds.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    var median: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }

    /// `median / p99` in the most readable unit, e.g. `41.2 µs / 88.0 µs`.
    var summary: String { "\(Latencies.format(median)) / \(Latencies.format(p99))" }

    /// A duration in s, ms or µs.
    static func format(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 1e-3 { return String(format: "%.2f ms", seconds * 1e3) }
        return String(format: "%.1f µs", seconds * 1e6)
    }
}
