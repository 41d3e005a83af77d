/// Times a piece of work several times and keeps the fastest run (the least disturbed by other processes).
enum Stopwatch {
    /// Seconds taken by the fastest of `repeats` runs of `work`.
    static func best(of repeats: Int, _ work: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        var best = Double.infinity
        for _ in 0..<max(1, repeats) {
            let elapsed = try clock.measure(work)
            best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        }
        return best
    }
}
