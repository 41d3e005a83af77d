import Foundation
import HealthModel

/// Values the generated seeds are built from, shared by every harness that needs a batch.
enum SeedData {
    /// A few step-count rows from two sources, with UUIDs and metadata when asked: `rows` rows a minute apart.
    static func batch(id: UInt64 = 7, rows: Int = 3, uuids: Bool = true, metadata: Bool = true) -> SampleBatch {
        let base: Timestamp = 1_700_000_000_000_000
        var random = SplitMix64(seed: id)
        return SampleBatch(
            batchID: id, subject: "anna", typeIdentifier: "stepCount", unit: "count",
            sources: [SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health"), SourceInfo(name: "iPhone")],
            starts: (0..<rows).map { base + Timestamp($0) * 60_000_000 },
            ends: (0..<rows).map { base + Timestamp($0) * 60_000_000 + 30_000_000 },
            values: (0..<rows).map { Double($0 * 10 + 3) },
            sourceIndices: (0..<rows).map { UInt32($0 % 2) },
            uuids: uuids ? (0..<rows).map { _ in uuid(&random) } : nil,
            metadata: metadata
                ? (0..<rows).map { row in
                    row == 0
                        ? [
                            "HKWasUserEntered": .number(1), "note": .string("walk"), "at": .date(base),
                            "weight": .quantity(70.5, unit: "kg"),
                        ] : [:]
                } : nil)
    }

    /// A UUID from `random`, so seeds are the same on every run.
    static func uuid(_ random: inout SplitMix64) -> UUID {
        let a = random.next()
        let b = random.next()
        return UUID(
            uuid: (
                UInt8(truncatingIfNeeded: a), UInt8(truncatingIfNeeded: a >> 8), UInt8(truncatingIfNeeded: a >> 16),
                UInt8(truncatingIfNeeded: a >> 24), UInt8(truncatingIfNeeded: a >> 32),
                UInt8(truncatingIfNeeded: a >> 40), UInt8(truncatingIfNeeded: a >> 48) & 0x0F | 0x40,
                UInt8(truncatingIfNeeded: a >> 56), UInt8(truncatingIfNeeded: b) & 0x3F | 0x80,
                UInt8(truncatingIfNeeded: b >> 8), UInt8(truncatingIfNeeded: b >> 16),
                UInt8(truncatingIfNeeded: b >> 24), UInt8(truncatingIfNeeded: b >> 32),
                UInt8(truncatingIfNeeded: b >> 40), UInt8(truncatingIfNeeded: b >> 48),
                UInt8(truncatingIfNeeded: b >> 56)
            ))
    }
}
