import Foundation

// Tests draw from HealthModel's seeded generator; importing TestSupport is enough to use it.
@_exported import struct HealthModel.SplitMix64

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
