/// How a call retries retryable errors (busy, storage unavailable, shutting down, too many connections,
/// connection lost or refused, timeout): jittered exponential backoff within a time budget, then the last error is
/// thrown. Permanent errors (an invalid request, a refused token) are thrown at once, never retried.
///
/// The budget counts from the call's first attempt: a retry starts only while it lasts, and the last pause is cut
/// short so that the last attempt starts as it runs out. An attempt under way is not interrupted, so a call can
/// take the budget plus one attempt (a refused connect returns at once; an unanswered one takes the connect
/// timeout). Pauses follow ``ReconnectPolicy``'s rule: `initialBackoff` doubling up to `maxBackoff`, each scaled
/// by a random factor in `1 - jitter ... 1`, so clients that lost the same server do not come back in lockstep.
///
/// An insert is re-sent with the same batch id, so a retry never stores a batch twice. A running subscription
/// reconnects under ``ReconnectPolicy`` instead, without limit.
public struct RetryPolicy: Hashable, Sendable {
    /// How long after a call's first attempt a retry may still start; `.zero`: never retry.
    public var budget: Duration
    /// The nominal pause before the first retry; it doubles before each further retry.
    public var initialBackoff: Duration
    /// The longest nominal pause between two attempts.
    public var maxBackoff: Duration
    /// The fraction, 0 ... 1, of each pause that is random (see ``ReconnectPolicy/jitter``).
    public var jitter: Double
    /// Seeds the jitter's generator so pauses are reproducible; `nil` draws them from the system's generator.
    public var seed: UInt64?

    /// A policy; `jitter` is clamped to 0 ... 1 and a negative budget counts as none.
    public init(
        budget: Duration, initialBackoff: Duration = .milliseconds(50), maxBackoff: Duration = .seconds(2),
        jitter: Double = 0.5, seed: UInt64? = nil
    ) {
        self.budget = max(budget, .zero)
        self.initialBackoff = initialBackoff
        self.maxBackoff = max(maxBackoff, initialBackoff)
        self.jitter = min(max(jitter.isFinite ? jitter : 0, 0), 1)
        self.seed = seed
    }

    /// 30 s of retries, nominal pauses of 50 ms doubling up to 2 s, half of each random: a call outlasts a restart
    /// of hkd (4-5 s for a large store) several times over, and is answered at most about 2 s after the server is
    /// back.
    public static let standard = RetryPolicy(budget: .seconds(30))
    /// One attempt, no retry.
    public static let none = RetryPolicy(budget: .zero)

    /// The successive pauses of one call.
    public func pauses() -> ReconnectPauses {
        ReconnectPolicy(initialBackoff: initialBackoff, maxBackoff: maxBackoff, jitter: jitter, seed: seed).pauses()
    }
}

/// A retry about to happen: what ``HealthClient``'s retry observer is told before each pause.
public struct RetryEvent: Sendable {
    /// Which retry this is: 1 for the first.
    public var retry: Int
    /// The retryable error the last attempt failed with.
    public var error: HealthClientError
    /// The pause before the retry.
    public var pause: Duration
    /// The call's whole budget (``RetryPolicy/budget``).
    public var budget: Duration
}

/// One call's retries under a ``RetryPolicy``: whether to try again after an error, and after what pause. A value
/// owned by the call.
struct RetrySchedule {
    private let budget: Duration
    private let deadline: ContinuousClock.Instant
    private var pauses: ReconnectPauses
    /// Retries granted so far.
    private(set) var retries = 0

    /// The schedule of a call whose first attempt starts at `start`.
    init(_ policy: RetryPolicy, startingAt start: ContinuousClock.Instant = .now) {
        budget = policy.budget
        deadline = start + policy.budget
        pauses = policy.pauses()
    }

    /// The retry to make after `error` at `now` (its pause ends by the deadline at the latest); `nil` when the
    /// error is permanent or the budget is spent: the call throws it.
    mutating func retry(after error: HealthClientError, at now: ContinuousClock.Instant = .now) -> RetryEvent? {
        guard error.isRetryable, now < deadline else { return nil }
        retries += 1
        return RetryEvent(retry: retries, error: error, pause: min(pauses.next(), deadline - now), budget: budget)
    }
}
