import HealthModel

/// How a live subscription reconnects after its connection is lost: jittered exponential backoff, capped, with
/// no limit on the number of attempts. A subscription retries for as long as its stream is iterated; only a
/// permanent error (an authentication or authorization refusal, an invalid query) ends it.
///
/// The first attempt after a loss is immediate; before each further attempt the subscription pauses for the
/// nominal delay (`initialBackoff` doubling up to `maxBackoff`) scaled by a random factor in `1 - jitter ... 1`,
/// so a fleet of agents that lost the same server does not come back in lockstep. With ``standard`` the nominal
/// delays are 100, 200, 400, 800, 1,600 ms, then 2 s for ever: the subscription is back at most about 2 s after
/// the server is (plus the handshake).
public struct ReconnectPolicy: Hashable, Sendable {
    /// The nominal pause before the second attempt after a loss.
    public var initialBackoff: Duration
    /// The longest nominal pause (the cap of the doubling).
    public var maxBackoff: Duration
    /// The fraction, 0 ... 1, of each pause that is random: 0.5 draws each pause from half to all of its nominal
    /// value; 0 makes pauses exact.
    public var jitter: Double
    /// Seeds the jitter's generator (a ``SplitMix64``) so pauses are reproducible, e.g. in tests; `nil` draws them
    /// from the system's generator.
    public var seed: UInt64?

    /// A policy; `jitter` is clamped to 0 ... 1.
    public init(initialBackoff: Duration, maxBackoff: Duration, jitter: Double = 0.5, seed: UInt64? = nil) {
        self.initialBackoff = initialBackoff
        self.maxBackoff = max(maxBackoff, initialBackoff)
        self.jitter = min(max(jitter.isFinite ? jitter : 0, 0), 1)
        self.seed = seed
    }

    /// 100 ms doubling up to 2 s, half of each pause random.
    public static let standard = ReconnectPolicy(initialBackoff: .milliseconds(100), maxBackoff: .seconds(2))

    /// The pauses of one subscription, starting with the first pause after a loss.
    public func pauses() -> ReconnectPauses { ReconnectPauses(self) }
}

/// The successive pauses of one subscription under a ``ReconnectPolicy`` (or of one call under a ``RetryPolicy``,
/// which pauses by the same rule); ``reset()`` after a reconnect starts the doubling again (the random generator
/// carries on). A value type owned by one task.
public struct ReconnectPauses: Sendable {
    private let policy: ReconnectPolicy
    private var nominal: Duration
    private var generator: JitterGenerator

    init(_ policy: ReconnectPolicy) {
        self.policy = policy
        nominal = policy.initialBackoff
        generator = JitterGenerator(seed: policy.seed)
    }

    /// The next pause: the nominal delay times a random factor in `1 - jitter ... 1`; the nominal delay doubles.
    public mutating func next() -> Duration {
        let current = nominal
        nominal = min(nominal * 2, policy.maxBackoff)
        guard policy.jitter > 0 else { return current }
        let factor = 1 - policy.jitter * Double.random(in: 0..<1, using: &generator)
        return current * factor
    }

    /// Starts the doubling again from the initial backoff.
    public mutating func reset() { nominal = policy.initialBackoff }
}

/// ``SplitMix64`` when seeded, the system's generator otherwise.
struct JitterGenerator: RandomNumberGenerator, Sendable {
    private var seeded: SplitMix64?

    init(seed: UInt64?) { seeded = seed.map(SplitMix64.init(seed:)) }

    mutating func next() -> UInt64 {
        if let value = seeded?.next() { return value }
        var system = SystemRandomNumberGenerator()
        return system.next()
    }
}
