import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// A regular block of mostly zero values is summed into buckets from its non-zero values alone
/// (``SparseRegularRows``), bit for bit as from its decoded rows; any other block is not read that way.
@Suite("Sparse regular blocks")
struct SparseRegularRowsTests {
    /// Rows every `step` from `first`, each lasting `duration`, zero but with probability `density` a whole or
    /// decimal value.
    static func rows(
        count: Int, first: Timestamp, step: Int64, duration: Int64, density: Double, decimals: Bool,
        using random: inout SplitMix64
    ) -> SeriesRows {
        var rows = SeriesRows()
        for i in 0..<count {
            let start = first + Int64(i) * step
            var value = 0.0
            if Double.random(in: 0..<1, using: &random) < density {
                // Decimals as a parser makes them (the nearest double to 57.37), which the block stores as decimals.
                value =
                    decimals
                    ? Double(Int.random(in: 100...13_099, using: &random)) / 100
                    : Double(Int.random(in: 1...130, using: &random))
            }
            rows.starts.append(start)
            rows.ends.append(start + duration)
            rows.values.append(value)
            rows.sourceIDs.append(3)
            rows.arrivals.append(UInt64(i + 1))
        }
        return rows
    }

    /// The bucket sums and touched buckets of `sealed`'s rows, through its decoded columns or its sparse reading
    /// (`nil` when it cannot be read so).
    static func sums(
        _ sealed: SealedBlock, bounds: [Timestamp], maxDuration: Int64, sparse: Bool
    ) -> ([UInt64], [Bool])? {
        var sums = BucketSums(bounds: bounds)
        if sparse {
            var rows = SparseRegularRows()
            guard sealed.sparseRegularRows(into: &rows) else { return nil }
            sums.addRun(rows, 0..<rows.count, maxDuration: maxDuration)
        } else {
            sealed.rows().withColumns { c in sums.addRun(c, 0..<c.starts.count, maxDuration: maxDuration) }
        }
        return (sums.sums.map(\.bitPattern), sums.touched)
    }

    @Test("sums and touched buckets equal the decoded rows' bit for bit: random steps, durations, buckets, values")
    func sameSums() {
        let seed = TestSeed.value(71)
        var random = SplitMix64(seed: seed)
        for round in 0..<160 {
            let step = [0, Micros.second, Micros.minute, 5 * Micros.minute, Micros.hour][round % 5]
            let duration = [0, Micros.minute, 90 * Micros.second, 3 * Micros.hour][
                Int.random(in: 0..<4, using: &random)]
            let first = 1_600_000_000 * Micros.second + Int64.random(in: 0..<Micros.day, using: &random)
            let count = Int.random(in: 2...4096, using: &random)
            let density = [0.0, 0.02, 0.15, 1.0][round % 4]
            let rows = Self.rows(
                count: count, first: first, step: step, duration: duration, density: density,
                decimals: round % 3 == 0, using: &random)
            let sealed = block(rows)
            // Buckets of random lengths from before the block to after it, some edges inside rows.
            let bucket = [Micros.minute, 37 * Micros.minute, Micros.hour, Micros.day][
                Int.random(in: 0..<4, using: &random)]
            let origin = first - Int64.random(in: -Micros.day...Micros.day, using: &random)
            let bounds = (0...Int.random(in: 1...200, using: &random)).map { origin + Int64($0) * bucket }
            let maxDuration = duration + [0, Micros.minute, Micros.day][Int.random(in: 0..<3, using: &random)]
            let dense = Self.sums(sealed, bounds: bounds, maxDuration: maxDuration, sparse: false)
            guard let sparse = Self.sums(sealed, bounds: bounds, maxDuration: maxDuration, sparse: true) else {
                // Mostly non-zero values are not a zero-bit column: decoded as they are.
                #expect(density == 1.0, "seed \(seed) round \(round): a sparse block not read as one")
                continue
            }
            #expect(dense?.0 == sparse.0, "seed \(seed) round \(round): sums")
            #expect(dense?.1 == sparse.1, "seed \(seed) round \(round): touched buckets")
        }
    }

    @Test("irregular starts, unequal durations, values not mostly zero or not decimal: read as decoded rows")
    func onlyRegularSparseBlocks() {
        var random = SplitMix64(seed: 72)
        var reading = SparseRegularRows()
        var regular = Self.rows(
            count: 100, first: 0, step: Micros.minute, duration: Micros.minute, density: 0.1, decimals: false,
            using: &random)
        #expect(block(regular).sparseRegularRows(into: &reading))
        #expect(reading.rows.count == regular.values.filter { $0 != 0 }.count)
        var irregular = regular
        irregular.starts[50] += 1
        irregular.ends[50] += 1
        #expect(!block(irregular).sparseRegularRows(into: &reading))
        var unequal = regular
        unequal.ends[10] += 1
        #expect(!block(unequal).sparseRegularRows(into: &reading))
        var dense = regular
        for i in dense.values.indices { dense.values[i] = 7 }
        #expect(!block(dense).sparseRegularRows(into: &reading))
        var arbitrary = regular
        arbitrary.values[3] = 1.0 / 3.0
        #expect(!block(arbitrary).sparseRegularRows(into: &reading))
        regular.starts.removeLast(99)
        regular.ends.removeLast(99)
        regular.values.removeLast(99)
        regular.sourceIDs.removeLast(99)
        regular.arrivals.removeLast(99)
        #expect(!block(regular).sparseRegularRows(into: &reading), "one row: nothing to gain")
    }
}

/// A packed column's plan says exactly how many bytes its encoding takes, so a column coder can pack only the
/// smaller of two candidates and write what it would have written packing both.
@Suite("Packed integer plans")
struct PackedIntegerPlanTests {
    @Test("the planned size is the encoded size, for random widths, outliers and lengths")
    func plannedSizeIsExact() {
        var random = SplitMix64(seed: TestSeed.value(81))
        for round in 0..<200 {
            let count = round < 5 ? round : Int.random(in: 1...5000, using: &random)
            let bits = Int.random(in: 0...64, using: &random)
            let outliers = Double.random(in: 0..<0.3, using: &random)
            let values: [UInt64] = (0..<count).map { _ in
                let small = bits == 0 ? 0 : random.next() >> UInt64(64 - bits)
                return Double.random(in: 0..<1, using: &random) < outliers ? random.next() : small &+ 1000
            }
            var writer = BlockWriter()
            let size = values.withUnsafeBufferPointer { PackedIntegers.size(of: $0, PackedIntegers.plan($0)) }
            values.withUnsafeBufferPointer { PackedIntegers.encode($0, into: &writer) }
            #expect(size == writer.bytes.count, "round \(round): \(count) values of \(bits) bits")
        }
    }
}
