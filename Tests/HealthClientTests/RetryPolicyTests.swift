import HealthClient
import Testing

@Suite("retry and reconnect policies")
struct RetryPolicyTests {
    @Test("the standard request policy pauses 50, 100, 200, 400 and 800 ms: 1.55 s in all")
    func standardRetryFigures() {
        #expect(RetryPolicy.standard.maxAttempts == 6)
        #expect(RetryPolicy.standard.totalBackoff == .milliseconds(1_550))
        #expect(RetryPolicy.none.totalBackoff == .zero)
    }

    @Test("reconnect pauses double from the initial backoff up to the cap, each scaled by a factor in 1 - jitter ... 1")
    func pausesAreJitteredAndCapped() {
        let policy = ReconnectPolicy(initialBackoff: .milliseconds(100), maxBackoff: .seconds(2), jitter: 0.5, seed: 7)
        var pauses = policy.pauses()
        let nominal: [Duration] = [100, 200, 400, 800, 1_600, 2_000, 2_000, 2_000].map { .milliseconds($0) }
        for expected in nominal {
            let pause = pauses.next()
            #expect(pause <= expected && pause >= expected * 0.5, "\(pause) outside half to all of \(expected)")
        }
        pauses.reset()
        let afterReset = pauses.next()
        #expect(afterReset <= .milliseconds(100) && afterReset >= .milliseconds(50))
    }

    @Test("a seed makes the pauses reproducible; another seed gives other pauses")
    func seededPausesRepeat() {
        func run(_ seed: UInt64) -> [Duration] {
            var pauses = ReconnectPolicy(initialBackoff: .milliseconds(100), maxBackoff: .seconds(2), seed: seed)
                .pauses()
            return (0..<10).map { _ in pauses.next() }
        }
        #expect(run(42) == run(42))
        #expect(run(42) != run(43))
    }

    @Test("without jitter the pauses are the nominal ones")
    func exactPauses() {
        var pauses = ReconnectPolicy(initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(300), jitter: 0)
            .pauses()
        #expect((0..<4).map { _ in pauses.next() } == [100, 200, 300, 300].map { .milliseconds($0) })
    }
}
