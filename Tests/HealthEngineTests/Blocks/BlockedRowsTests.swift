import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// The plain model ``BlockedRows`` must agree with: every row with its arrival sequence, sorted by start and
/// then by arrival, so equal starts keep the order they came in (as ``Series`` keeps them).
private struct ReferenceRows {
    struct Row {
        var start: Timestamp
        var end: Timestamp
        var value: Double
        var source: UInt16
        var arrival: UInt64
        var sequence: Int
    }
    var rows: [Row] = []
    var nextSequence = 0

    mutating func merge(_ batch: SeriesRows) {
        for i in 0..<batch.count {
            rows.append(
                Row(
                    start: batch.starts[i], end: batch.ends[i], value: batch.values[i], source: batch.sourceIDs[i],
                    arrival: batch.arrivals[i], sequence: nextSequence))
            nextSequence += 1
        }
        rows.sort { ($0.start, $0.sequence) < ($1.start, $1.sequence) }
    }

    mutating func remove(_ indices: [Int]) {
        for index in indices.reversed() { rows.remove(at: index) }
    }

    var seriesRows: SeriesRows {
        var result = SeriesRows()
        for row in rows {
            result.starts.append(row.start)
            result.ends.append(row.end)
            result.values.append(row.value)
            result.sourceIDs.append(row.source)
            result.arrivals.append(row.arrival)
        }
        return result
    }

    func figures(_ date: DatePredicate) -> RangeFigures {
        var figures = RangeFigures()
        for row in rows where date.matches(start: row.start, end: row.end) {
            figures.add(start: row.start, end: row.end, value: row.value)
        }
        return figures
    }

    func bucketSums(_ boundaries: [Timestamp]) -> [Double] {
        (0..<(boundaries.count - 1)).map { b in
            var sum = ProratedSum(window: boundaries[b]..<boundaries[b + 1])
            let series = seriesRows
            series.starts.withUnsafeBufferPointer { s in
                series.ends.withUnsafeBufferPointer { e in
                    series.values.withUnsafeBufferPointer { v in
                        series.sourceIDs.withUnsafeBufferPointer { ids in
                            sum.add(Columns(starts: s, ends: e, values: v, sourceIDs: ids), 0..<series.count)
                        }
                    }
                }
            }
            return sum.total
        }
    }
}

@Suite("Blocked rows")
struct BlockedRowsTests {
    /// A batch of `count` rows around `around`: one source or several, whole or fractional values, sorted or not.
    private func batch(
        count: Int, around: Timestamp, spread: Int64, whole: Bool, arrival: inout UInt64, using random: inout SplitMix64
    ) -> SeriesRows {
        var rows = SeriesRows()
        let sources = UInt16.random(in: 1...3, using: &random)
        for _ in 0..<count {
            let start = around + Int64.random(in: 0...spread, using: &random) / 60 * 60
            let duration = [0, 60, 3600, Int64.random(in: 1...86_400, using: &random)][
                Int.random(in: 0..<4, using: &random)]
            rows.starts.append(start)
            rows.ends.append(start + duration)
            rows.values.append(
                whole ? Double(Int.random(in: 0...200, using: &random)) : Double.random(in: 0...100, using: &random))
            rows.sourceIDs.append(UInt16.random(in: 0..<sources, using: &random))
            arrival += 1
            rows.arrivals.append(arrival)
        }
        if Bool.random(using: &random) {
            let order = rows.startOrder()
            var sorted = SeriesRows()
            for i in order { sorted.append(row: i, of: rows) }
            rows = sorted
        }
        return rows
    }

    /// Block order: each block's last start at or before the next one's first, the head after the last block.
    private func checkOrder(_ blocked: BlockedRows) -> Bool {
        for (a, b) in zip(blocked.blocks, blocked.blocks.dropFirst()) where a.summary.lastStart > b.summary.firstStart {
            return false
        }
        if let last = blocked.blocks.last, let first = blocked.head.starts.first, first < last.summary.lastStart {
            return false
        }
        return blocked.head.count < blocked.blockRows
    }

    @Test("random appends, late batches and deletions: the same rows, figures and bucket sums as row by row")
    func againstRowByRow() {
        let seed = TestSeed.value(2020)
        var random = SplitMix64(seed: seed)
        for round in 0..<8 {
            let whole = round % 3 != 2
            var blocked = BlockedRows(blockRows: [4, 16, 64, 300][round % 4])
            var reference = ReferenceRows()
            var arrival: UInt64 = 0
            var clock: Timestamp = Timestamp(Int.random(in: -1_000_000...1_000_000, using: &random)) * 60
            for step in 0..<30 {
                let kind = Int.random(in: 0..<10, using: &random)
                if kind < 6 || reference.rows.isEmpty {
                    let count = Int.random(in: 1...200, using: &random)
                    let rows = batch(
                        count: count, around: clock, spread: Int64(count) * 60, whole: whole, arrival: &arrival,
                        using: &random)
                    clock += Int64(count) * 60
                    blocked.merge(rows)
                    reference.merge(rows)
                } else if kind < 8 {
                    let back = Int64.random(in: 0...Int64(reference.rows.count) * 60, using: &random)
                    let rows = batch(
                        count: Int.random(in: 1...40, using: &random), around: clock - back, spread: 3600,
                        whole: whole, arrival: &arrival, using: &random)
                    blocked.merge(rows)
                    reference.merge(rows)
                } else {
                    let total = reference.rows.count
                    let removed = Array(
                        Set(
                            (0..<Int.random(in: 1...max(1, total / 4), using: &random)).map { _ in
                                Int.random(in: 0..<total, using: &random)
                            })
                    ).sorted()
                    blocked.removeRows(removed)
                    reference.remove(removed)
                }
                let context = "seed \(seed) round \(round) step \(step)"
                #expect(blocked.count == reference.rows.count, "\(context)")
                #expect(sameBits(blocked.allRows(), reference.seriesRows), "\(context)")
                #expect(checkOrder(blocked), "\(context)")
                // Changes pages: the rows newer than an anchor, by anchor, a limited number at a time.
                let byArrival = reference.rows.enumerated().map { (anchor: $0.element.arrival, row: $0.offset) }
                    .sorted { $0.anchor < $1.anchor }
                for _ in 0..<3 {
                    let after = UInt64.random(in: 0...arrival, using: &random)
                    let limit = [0, 1, 3, 50, 1000][Int.random(in: 0..<5, using: &random)]
                    let newer = byArrival.filter { $0.anchor > after }
                    let want = limit == 0 ? newer : Array(newer.prefix(limit))
                    let (got, more) = blocked.rowsArrived(after: after, limit: limit)
                    #expect(got.map(\.anchor) == want.map(\.anchor), "\(context) after \(after) limit \(limit)")
                    #expect(got.map(\.row) == want.map(\.row), "\(context) after \(after) limit \(limit)")
                    #expect(more == (want.count < newer.count), "\(context) after \(after) limit \(limit)")
                }
                guard let first = reference.rows.first?.start, let last = reference.rows.last?.start else { continue }
                for _ in 0..<4 {
                    let a = Int64.random(in: (first - 7200)...(last + 7200), using: &random)
                    let b = Int64.random(in: a...(last + 7200), using: &random)
                    let date = DatePredicate(
                        start: Bool.random(using: &random) ? a : nil, end: Bool.random(using: &random) ? b : nil,
                        strictStartDate: Bool.random(using: &random), strictEndDate: Bool.random(using: &random))
                    let got = blocked.figures(date)
                    let want = reference.figures(date)
                    #expect(got.count == want.count, "\(context) \(date)")
                    #expect(got.minimum == want.minimum && got.maximum == want.maximum, "\(context) \(date)")
                    #expect(got.earliestStart == want.earliestStart, "\(context) \(date)")
                    #expect(got.latestEnd == want.latestEnd, "\(context) \(date)")
                    #expect(close(got.sum, want.sum, exact: whole), "\(context) \(date): \(got.sum) vs \(want.sum)")
                }
                let width = max(1, (last - first) / Int64.random(in: 1...30, using: &random))
                let from = first - Int64.random(in: 0...7200, using: &random)
                let boundaries = Array(stride(from: from, through: last + 90_000 + width, by: Int(width)))
                let got = blocked.bucketSums(boundaries)
                let want = reference.bucketSums(boundaries)
                #expect(got.count == want.count, "\(context)")
                for (g, w) in zip(got, want) where !close(g, w, exact: false) {
                    Issue.record("\(context): bucket sum \(g) vs \(w)")
                    break
                }
            }
        }
    }

    @Test("chunks cover every row once, in order, each with its first row number")
    func chunks() {
        var random = SplitMix64(seed: TestSeed.value(5))
        var blocked = BlockedRows(blockRows: 10)
        var arrival: UInt64 = 0
        blocked.merge(batch(count: 95, around: 0, spread: 95 * 60, whole: true, arrival: &arrival, using: &random))
        var seen = SeriesRows()
        var expectedFirst = 0
        blocked.forEachChunk { c, firstRow in
            #expect(firstRow == expectedFirst)
            expectedFirst += c.starts.count
            seen.starts.append(contentsOf: c.starts)
            seen.values.append(contentsOf: c.values)
        }
        let all = blocked.allRows()
        #expect(seen.starts == all.starts)
        #expect(seen.values == all.values)
        #expect(blocked.blocks.count == 9)
        #expect(blocked.head.count == 5)
    }

    @Test("W1-like rows sealed: under 1 resident byte a sample")
    func resident() {
        var blocked = BlockedRows()
        var rows = SeriesRows()
        for i in 0..<100_000 {
            rows.starts.append(Int64(i) * Micros.minute)
            rows.ends.append(Int64(i + 1) * Micros.minute)
            rows.values.append(Double(60 + i % 11))
            rows.sourceIDs.append(0)
            rows.arrivals.append(UInt64(i + 1))
        }
        blocked.merge(rows)
        #expect(Double(blocked.approximateBytes) / 100_000 < 1, "\(blocked.approximateBytes) bytes")
    }

    @Test("a restored short last block stays sealed until rows come, then they extend it as the head")
    func restoredShortBlock() {
        func minutes(_ range: Range<Int>) -> SeriesRows {
            var rows = SeriesRows()
            for i in range {
                rows.starts.append(Int64(i) * Micros.minute)
                rows.ends.append(Int64(i + 1) * Micros.minute)
                rows.values.append(Double(i % 7))
                rows.sourceIDs.append(0)
                rows.arrivals.append(UInt64(i + 1))
            }
            return rows
        }
        var written = BlockedRows(blockRows: 100)
        written.merge(minutes(0..<250))
        // As a snapshot holds it: the two full blocks, then the head as one shorter block.
        let blocks = written.blocks + [SealedBlock(encoding: written.head, range: 0..<written.head.count)]
        var restored = BlockedRows(
            sealed: blocks, arrivalSpans: [1...100, 101...200, 201...250], blockRows: 100)
        #expect(restored.blocks.count == 3 && restored.head.count == 0 && restored.count == 250)
        #expect(restored.allRows().starts == minutes(0..<250).starts)
        restored.merge(minutes(250..<260))
        #expect(restored.blocks.count == 2 && restored.head.count == 60)
        #expect(restored.allRows().starts == minutes(0..<260).starts)
        #expect(restored.allRows().arrivals == minutes(0..<260).arrivals)
        restored.merge(minutes(260..<300))
        #expect(restored.blocks.count == 3 && restored.head.count == 0 && restored.count == 300)
    }
}

/// Equal, or within a relative 1e-9 when the sums were added in different orders.
private func close(_ a: Double, _ b: Double, exact: Bool) -> Bool {
    exact ? a == b : abs(a - b) <= 1e-9 * max(1, abs(a), abs(b))
}
