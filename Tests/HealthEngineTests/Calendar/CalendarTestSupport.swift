import Foundation
import HealthModel

/// A small deterministic generator (SplitMix64) so randomized tests repeat exactly.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Instants written as UTC text in tests, so expected values are read by a person, not computed by the code.
enum UTC {
    /// `"2024-03-10T07:00:00Z"` (optionally with `.SSS`) as a ``Timestamp``.
    static func at(_ text: String) -> Timestamp {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions =
            text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        guard let date = formatter.date(from: text) else { fatalError("bad test date \(text)") }
        return Timestamp((date.timeIntervalSince1970 * 1000).rounded()) * 1000
    }
}
