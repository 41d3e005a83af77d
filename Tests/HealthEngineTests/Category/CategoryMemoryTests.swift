import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Category samples cost no more memory per sample than quantity samples: they live in the same sealed blocks
/// (docs/benchmarks-history.md, "Memory per sample").
@Suite("Category memory")
struct CategoryMemoryTests {
    /// The store's resident bytes per sample after `count` rows of `type` in batches of 10,000 with derived UUIDs.
    static func bytesPerSample(type: String, count: Int, value: (Int) -> Double) throws -> Double {
        let store = HealthStore()
        var random = SplitMix64(seed: 0xC47E_6041)
        var start: Timestamp = 1_700_000_000_000_000
        var row = 0
        while row < count {
            var batch = SampleBatch(
                batchID: freshBatchID(), subject: "anna", typeIdentifier: type,
                unit: try QuantityType.named(type).batchUnit)
            for _ in 0..<min(10_000, count - row) {
                let duration = Timestamp(Int.random(in: 1...30, using: &random)) * 60_000_000
                batch.append(start: start, end: start + duration, value: value(row), source: watch)
                start += duration
                row += 1
            }
            _ = try store.insert(batch)
        }
        let info = store.info()
        #expect(info.samplesByType[type] == count)
        return Double(info.approximateBytes) / Double(count)
    }

    @Test("a sleep sample takes about the bytes a step sample takes in sealed blocks")
    func sameBytesAsQuantities() throws {
        let count = 200_000
        let sleep = try Self.bytesPerSample(type: "sleepAnalysis", count: count) { Double([0, 3, 4, 5, 2][$0 % 5]) }
        let steps = try Self.bytesPerSample(type: "stepCount", count: count) { Double($0 % 120) }
        print("CategoryMemoryTests: sleepAnalysis \(sleep) B/sample, stepCount \(steps) B/sample")
        // The same blocks. Durations of 1 to 30 random minutes, packed in minutes, make starts and durations cost
        // about a byte and a half a row; the values differ by a few bits (the steps rise by one a row, the sleep
        // values cycle).
        #expect(abs(sleep - steps) < 0.5)
        #expect(sleep >= 1.5 && sleep <= 4)
    }
}
