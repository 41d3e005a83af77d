@testable import HealthClient
import Testing

@Suite("retry and reconnect policies")
struct RetryPolicyTests {
    @Test("the standard request policy retries for 30 s, 50 ms doubling to 2 s, half of each pause random")
    func standardRetryFigures() {
        #expect(RetryPolicy.standard.budget == .seconds(30))
        #expect(RetryPolicy.standard.initialBackoff == .milliseconds(50))
        #expect(RetryPolicy.standard.maxBackoff == .seconds(2) && RetryPolicy.standard.jitter == 0.5)
        #expect(RetryPolicy.none.budget == .zero)
        var pauses = RetryPolicy(budget: .seconds(30), seed: 3).pauses()
        for nominal in [50, 100, 200, 400, 800, 1_600, 2_000, 2_000].map({ Duration.milliseconds($0) }) {
            let pause = pauses.next()
            #expect(pause <= nominal && pause >= nominal * 0.5, "\(pause) outside half to all of \(nominal)")
        }
    }

    @Test("retries run until the budget is spent; the last pause ends with it")
    func scheduleHonoursTheBudget() throws {
        let start = ContinuousClock.now
        let lost = HealthClientError.local(.connectionLost, "refused")
        var schedule = RetrySchedule(
            RetryPolicy(budget: .seconds(1), initialBackoff: .milliseconds(100), maxBackoff: .seconds(2), jitter: 0),
            startingAt: start)
        var now = start
        var pauses: [Duration] = []
        while let retry = schedule.retry(after: lost, at: now) {
            #expect(retry.retry == pauses.count + 1 && retry.budget == .seconds(1) && retry.error == lost)
            pauses.append(retry.pause)
            now += retry.pause
        }
        // 100, 200, 400, then the 800 ms pause is cut to the 300 ms left.
        #expect(pauses == [100, 200, 400, 300].map { .milliseconds($0) })
        #expect(now == start + .seconds(1))
    }

    @Test("permanent errors are never retried, and neither is anything with no budget")
    func permanentErrorsAndNoBudget() {
        let start = ContinuousClock.now
        var schedule = RetrySchedule(.standard, startingAt: start)
        #expect(schedule.retry(after: .local(.invalidSample, "negative"), at: start) == nil)
        #expect(
            schedule.retry(after: HealthClientError(.server, HealthError(.tokenRevoked, "revoked")), at: start) == nil)
        #expect(schedule.retry(after: .local(.busy, "busy"), at: start)?.retry == 1)
        var none = RetrySchedule(.none, startingAt: start)
        #expect(none.retry(after: .local(.connectionLost, "refused"), at: start) == nil)
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
