import Foundation

/// A small deterministic generator (SplitMix64), so every randomized test case is reproducible from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seed of a randomised test, so that a failure, or a crash, can be replayed.
///
/// `TestSeed.value(42)` is 42 unless `HKD_TEST_SEED` is set in the environment (to replay a reported seed, or
/// to explore others: `HKD_TEST_SEED=7 swift test --filter killDuringIngest`). It prints the seed with the
/// test's name before the test uses it, and tests put it in their failure messages.
public enum TestSeed {
    /// `HKD_TEST_SEED` if set, else `fallback`; printed, with `test`.
    public static func value(_ fallback: UInt64, test: String = #function) -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["HKD_TEST_SEED"].flatMap { UInt64($0) } ?? fallback
        print("\(test): random seed \(seed) (replay with HKD_TEST_SEED=\(seed))")
        return seed
    }
}
