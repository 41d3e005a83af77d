import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Random rows for blocks: sorted starts with equal ones, durations from zero to years, values of every kind
/// (whole, decimal, arbitrary, -0), runs of sources, arrivals in batches and out of order.
func randomBlockRows(count: Int, using random: inout SplitMix64) -> SeriesRows {
    var rows = SeriesRows()
    let range = SupportedInstants.range
    var start = Int64.random(in: range.lowerBound...(range.lowerBound + Micros.day * 365 * 9000), using: &random)
    let valueKind = Int.random(in: 0..<5, using: &random)
    let gapKind = Int.random(in: 0..<3, using: &random)
    var source = UInt16.random(in: 0...UInt16.max, using: &random)
    var arrival = UInt64.random(in: 0...UInt64.max / 2, using: &random)
    for _ in 0..<count {
        switch gapKind {
        case 0: start += Micros.minute
        case 1: start += Int64.random(in: 0...3, using: &random) * Micros.second
        default: start += Int64.random(in: 0...Micros.day, using: &random)
        }
        start = min(start, range.upperBound)
        let duration =
            Int64.random(in: 0...3, using: &random) == 0 ? 0 : Int64.random(in: 0...Micros.day * 400, using: &random)
        let value: Double =
            switch valueKind {
            case 0: Double(Int.random(in: 40...190, using: &random))
            case 1: Double(Int.random(in: -5000...5000, using: &random)) / 100
            case 2: Double.random(in: -1e6...1e6, using: &random)
            case 3: [0.0, -0.0, 1.5, -1.5e300, Double.leastNonzeroMagnitude][Int.random(in: 0..<5, using: &random)]
            default: Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF) * (Bool.random(using: &random) ? 1 : -1)
            }
        if Int.random(in: 0..<50, using: &random) == 0 { source = UInt16.random(in: 0...UInt16.max, using: &random) }
        arrival = Int.random(in: 0..<20, using: &random) == 0 ? random.next() : arrival &+ 1
        rows.starts.append(start)
        rows.ends.append(min(start + duration, range.upperBound))
        rows.values.append(value)
        rows.sourceIDs.append(source)
        rows.arrivals.append(arrival)
    }
    return rows
}

/// Whether two row sets hold the same bits (so -0 differs from 0).
func sameBits(_ a: SeriesRows, _ b: SeriesRows) -> Bool {
    a.starts == b.starts && a.ends == b.ends && a.values.map(\.bitPattern) == b.values.map(\.bitPattern)
        && a.sourceIDs == b.sourceIDs && a.arrivals == b.arrivals
}

/// Encodes all of `rows` as one block.
func block(_ rows: SeriesRows) -> SealedBlock { SealedBlock(encoding: rows, range: 0..<rows.count) }

@Suite("Sealed blocks")
struct SealedBlockTests {
    @Test("random rows round-trip bit for bit, and the bytes validate to the same summary")
    func randomRoundTrip() throws {
        let seed = TestSeed.value(20)
        var random = SplitMix64(seed: seed)
        for round in 0..<120 {
            let count = round < 10 ? round + 1 : Int.random(in: 1...5000, using: &random)
            let rows = randomBlockRows(count: count, using: &random)
            let sealed = block(rows)
            #expect(sameBits(sealed.rows(), rows), "seed \(seed) round \(round)")
            #expect(sealed.summary == blockSummary(of: rows), "seed \(seed) round \(round)")
            let read = try SealedBlock(validating: sealed.bytes)
            #expect(read.summary == sealed.summary)
            #expect(sameBits(read.rows(), rows), "seed \(seed) round \(round)")
        }
    }

    @Test("zero-bit columns with exceptions (regular starts, equal durations, one value) decode bit for bit")
    func sparseColumns() throws {
        let seed = TestSeed.value(21)
        var random = SplitMix64(seed: seed)
        for round in 0..<200 {
            let count = Int.random(in: 1...3000, using: &random)
            // Each column regular but for a few rows (none, one, or several exceptions), so the packed columns
            // take zero bits and the decoders' one-pass paths run.
            let irregular = [0, 1, Int.random(in: 2...40, using: &random)][Int.random(in: 0..<3, using: &random)]
            func odd() -> Bool { Int.random(in: 0..<max(count, 1), using: &random) < irregular }
            let step = [Micros.minute, Micros.second, 0, 7][Int.random(in: 0..<4, using: &random)]
            let duration = [0, Micros.minute, 5][Int.random(in: 0..<3, using: &random)]
            let common = [0.0, 72, 1.5, -0.25][Int.random(in: 0..<4, using: &random)]
            let exponent = Int.random(in: 0...3, using: &random)
            var rows = SeriesRows()
            var start = Timestamp.random(in: 0...Micros.day * 365 * 60, using: &random)
            // Two sources sampling the same instants: the deltas alternate between zero and the step.
            let interleaved = Bool.random(using: &random)
            for row in 0..<count {
                let regular = interleaved && row % 2 == 1 ? 0 : step
                start += odd() ? Timestamp.random(in: 0...Micros.hour, using: &random) : regular
                let length = odd() ? Timestamp.random(in: 0...Micros.day, using: &random) : duration
                let value =
                    odd() ? Double(Int.random(in: -300...100_000, using: &random)) / pow(10, Double(exponent)) : common
                rows.starts.append(start)
                rows.ends.append(start + length)
                rows.values.append(value)
                rows.sourceIDs.append(odd() ? 3 : 1)
                rows.arrivals.append(UInt64(rows.count))
            }
            let sealed = block(rows)
            #expect(sameBits(sealed.rows(), rows), "seed \(seed) round \(round)")
            let read = try SealedBlock(validating: sealed.bytes)
            #expect(sameBits(read.rows(), rows), "seed \(seed) round \(round)")
        }
    }

    @Test("the summary: count, sum, extremes, first and last start, latest end, longest duration, sources")
    func summary() {
        let rows = blockRows([(0, 60, 10.0, 3, 0), (30, 300, 20, 1, 30), (30, 40, -5, 3, 31), (100, 100, 7.5, 9, 5)])
        let s = block(rows).summary
        #expect(s.count == 4)
        #expect(s.sum == 32.5)
        #expect(s.minimum == -5)
        #expect(s.maximum == 20)
        #expect(s.firstStart == 0)
        #expect(s.lastStart == 100)
        #expect(s.latestEnd == 300)
        #expect(s.longestDuration == 270)
        #expect(s.sources == [1, 3, 9])
        #expect(!s.isSingleSource)
    }

    @Test("edges: one row, the extreme instants, equal starts, -0, extreme values, every source id")
    func edges() throws {
        let low = SupportedInstants.range.lowerBound
        let high = SupportedInstants.range.upperBound
        typealias Tuple = (Int64, Int64, Double, UInt16, UInt64)
        let many: [Tuple] = (0..<65536).map { i -> Tuple in
            (Int64(i), Int64(i) + 1, Double(i) * 0.001, UInt16(i), UInt64(i) * 3)
        }
        let wide: [Tuple] = (0..<1000).map { i -> Tuple in (low + Int64(i), high - Int64(i), 1e15 + Double(i), 0, 0) }
        let equal: [Tuple] = Array(repeating: (5, 5, 1, 7, 9), count: 4096)
        let tiny: [Tuple] = [
            (low, high, Double.leastNonzeroMagnitude, 1, 1), (low, high, -0.0, 2, 0), (low, high, 0.0, 3, UInt64.max),
        ]
        let cases: [[Tuple]] = [
            [(low, high, -0.0, 0, 0)],
            [(high, high, Double.greatestFiniteMagnitude, UInt16.max, UInt64.max)],
            [(low, low, 0, 0, UInt64.max), (high, high, -Double.greatestFiniteMagnitude, UInt16.max, 0)],
            equal, tiny, many, wide,
        ]
        for (index, tuples) in cases.enumerated() {
            let rows = blockRows(tuples)
            let sealed = block(rows)
            #expect(sameBits(sealed.rows(), rows), "case \(index)")
            let read = try SealedBlock(validating: sealed.bytes)
            #expect(sameBits(read.rows(), rows), "case \(index)")
        }
    }

    @Test("regular data packs tight: a minute's heart rate from one batch in under 1.2 bytes a row")
    func compact() {
        var random = SplitMix64(seed: TestSeed.value(7))
        var rows = SeriesRows()
        var rate = 70.0
        for i in 0..<4096 {
            rows.starts.append(Int64(i) * Micros.minute)
            rows.ends.append(Int64(i) * Micros.minute + Micros.minute)
            rate = min(180, max(40, rate + Double(Int.random(in: -3...3, using: &random))))
            rows.values.append(rate)
            rows.sourceIDs.append(0)
            rows.arrivals.append(1000 + UInt64(i))
        }
        let bytes = block(rows).bytes.count
        #expect(Double(bytes) / 4096 < 1.2, "\(bytes) bytes")
    }

    @Test(
        "starts of whole seconds at irregular gaps pack in the bits of their seconds (a unit), and decode bit for bit",
        arguments: [Micros.second, 7_000, Micros.minute] as [Int64])
    func startsWithAUnit(unit: Int64) throws {
        var random = SplitMix64(seed: TestSeed.value(11))
        var rows = SeriesRows()
        var start: Int64 = 1_546_318_800 * Micros.second
        for i in 0..<4096 {
            // Gaps of 20 to 180 units, as a watch's heart rate; a run of equal gaps in the middle.
            start += (i > 1000 && i < 1200 ? 60 : 20 + Int64(random.next() % 161)) * unit
            rows.starts.append(start)
            rows.ends.append(start)
            rows.values.append(60)
            rows.sourceIDs.append(0)
            rows.arrivals.append(UInt64(i) + 1)
        }
        let sealed = block(rows)
        #expect(sameBits(sealed.rows(), rows))
        #expect(sameBits(try SealedBlock(validating: sealed.bytes).rows(), rows))
        // About a byte a row for the gaps (8 bits of 161 choices), not the 3–4 of microseconds.
        let startBytes = Int(sealed.columnOffsets[1] - sealed.columnOffsets[0])
        #expect(startBytes < 4096 * 5 / 4, "\(startBytes) bytes of starts")
        // A unit of 0 or 1 is damage, refused.
        var damaged = sealed.bytes
        let unitAt = Int(sealed.columnOffsets[0]) + 1
        #expect(
            damaged[unitAt - 1] == StartColumn.scaledDeltaMode
                || damaged[unitAt - 1] == StartColumn.scaledDeltaOfDeltaMode)
        damaged[unitAt] = 1
        #expect(throws: BlockDecodingError.self) { try SealedBlock(validating: damaged) }
    }

    @Test("decoding only some columns leaves the others alone")
    func someColumns() {
        var random = SplitMix64(seed: TestSeed.value(3))
        let rows = randomBlockRows(count: 777, using: &random)
        let sealed = block(rows)
        var values = [Double](repeating: .nan, count: 777)
        var sources = [UInt16](repeating: 0, count: 777)
        values.withUnsafeMutableBufferPointer { v in
            sources.withUnsafeMutableBufferPointer { ids in
                sealed.decode(into: BlockBuffers(values: v.baseAddress, sourceIDs: ids.baseAddress))
            }
        }
        #expect(values.map(\.bitPattern) == rows.values.map(\.bitPattern))
        #expect(ContiguousArray(sources) == rows.sourceIDs)
    }

    @Test("damaged bytes are refused, never trap: every truncation, every flipped byte, random bytes, huge counts")
    func malformed() {
        var random = SplitMix64(seed: TestSeed.value(11))
        for round in 0..<6 {
            let rows = randomBlockRows(count: Int.random(in: 1...120, using: &random), using: &random)
            let bytes = block(rows).bytes
            for length in 0..<bytes.count {
                #expect(throws: BlockDecodingError.self, "round \(round) length \(length)") {
                    try SealedBlock(validating: Array(bytes[..<length]))
                }
            }
            for position in bytes.indices {
                var damaged = bytes
                damaged[position] ^= UInt8.random(in: 1...255, using: &random)
                // A flip may still decode to valid rows (a value bit, say); then they round-trip.
                if let read = try? SealedBlock(validating: damaged) {
                    #expect(sameBits(block(read.rows()).rows(), read.rows()))
                }
            }
            #expect(throws: BlockDecodingError.self) { try SealedBlock(validating: bytes + [0]) }
        }
        for _ in 0..<2000 {
            let noise = (0..<Int.random(in: 0...200, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? SealedBlock(validating: [SealedBlock.version] + noise)
        }
        var sourcesPastTheLast = BlockWriter()
        sourcesPastTheLast.byte(SealedBlock.version)
        sourcesPastTheLast.varint(2)
        for _ in 0..<7 { sourcesPastTheLast.fixed64(0) }
        sourcesPastTheLast.varint(2)
        sourcesPastTheLast.varint(65535)
        sourcesPastTheLast.varint(0)
        #expect(throws: BlockDecodingError.self) { try SealedBlock(validating: sourcesPastTheLast.bytes) }
        var huge = BlockWriter()
        huge.byte(SealedBlock.version)
        huge.varint(1 << 40)
        #expect(throws: BlockDecodingError.self) { try SealedBlock(validating: huge.bytes) }
    }

    @Test("rows that break the engine's invariants are refused when read back")
    func invariants() {
        var rows = SeriesRows()
        rows.starts = [10, 5]
        rows.ends = [10, 5]
        rows.values = [1, 2]
        rows.sourceIDs = [0, 0]
        rows.arrivals = [0, 1]
        #expect(throws: BlockDecodingError.self) { try SealedBlock(validating: block(rows).bytes) }
        rows.starts = [5, 10]
        rows.ends = [4, 10]
        #expect(throws: BlockDecodingError.self) { try SealedBlock(validating: block(rows).bytes) }
        rows.ends = [5, 10]
        rows.values = [1, .infinity]
        #expect(throws: BlockDecodingError.self) { try SealedBlock(validating: block(rows).bytes) }
        rows.values = [1, 2]
        rows.starts = [SupportedInstants.range.upperBound + 1, SupportedInstants.range.upperBound + 1]
        rows.ends = rows.starts
        #expect(throws: BlockDecodingError.self) { try SealedBlock(validating: block(rows).bytes) }
    }
}

/// The summary of all of `rows`, computed from the rows.
func blockSummary(of rows: SeriesRows) -> BlockSummary { withBlockColumns(rows) { BlockSummary($0) } }

/// Runs `body` on all of `rows` as block columns.
func withBlockColumns<R>(_ rows: SeriesRows, _ body: (BlockColumns) -> R) -> R {
    rows.starts.withUnsafeBufferPointer { s in
        rows.ends.withUnsafeBufferPointer { e in
            rows.values.withUnsafeBufferPointer { v in
                rows.sourceIDs.withUnsafeBufferPointer { ids in
                    rows.arrivals.withUnsafeBufferPointer { a in
                        body(BlockColumns(starts: s, ends: e, values: v, sourceIDs: ids, arrivals: a))
                    }
                }
            }
        }
    }
}

/// Rows from (start, end, value, source, arrival) tuples.
func blockRows(_ tuples: [(Int64, Int64, Double, UInt16, UInt64)]) -> SeriesRows {
    var rows = SeriesRows()
    for (start, end, value, source, arrival) in tuples {
        rows.starts.append(start)
        rows.ends.append(end)
        rows.values.append(value)
        rows.sourceIDs.append(source)
        rows.arrivals.append(arrival)
    }
    return rows
}
