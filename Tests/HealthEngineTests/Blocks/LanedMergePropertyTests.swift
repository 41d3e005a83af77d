import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Merged sums read by lanes (``Series/addLanedSums(context:fed:sourceRanks:into:bySource:)``) against the
/// row-by-row merge: a watch worn almost all along (per-minute rows, a few gaps, some rows lasting longer than
/// their minute), a phone counting the same walk mostly under it, an app logging now and then, some of their rows
/// reaching into the watch's gaps (counted in their uncovered pieces), a few points. One store seals blocks of a
/// few rows (laned where sources mix), the other keeps every row in its head, merged row by row; every collection
/// must agree up to rounding.
@Suite("Merged sums by lanes")
struct LanedMergePropertyTests {
    static let start: Timestamp = 1_710_000_000_000_000  // 2024-03-09, the day before New York's spring forward

    /// Rows of one source over `minutes` minutes from ``start``.
    static func rows(
        of source: SourceInfo, minutes: Int, every: ClosedRange<Int>, gaps: Int, outside: Int,
        using random: inout SplitMix64
    ) -> [Row] {
        var rows: [Row] = []
        var minute = 0
        while minute < minutes {
            let start = Self.start + Timestamp(minute) * Micros.minute
            // Mostly a minute; some longer; a few points (instants, which cover nothing).
            let length =
                switch Int.random(in: 0..<16, using: &random) {
                case 0, 1: Int.random(in: 2...4, using: &random)
                case 2: 0
                default: 1
                }
            let value = Int.random(in: 0..<3, using: &random) == 0 ? 0 : Double(Int.random(in: 1...120, using: &random))
            rows.append(Row(start, start + Timestamp(length) * Micros.minute, value, source))
            minute += Int.random(in: every, using: &random)
            // Now and then a gap, and a row reaching into one.
            if Int.random(in: 0..<max(1, minutes / max(1, gaps)), using: &random) == 0 {
                minute += Int.random(in: 30...300, using: &random)
            }
            if Int.random(in: 0..<max(1, minutes / max(1, outside)), using: &random) == 0 {
                let late = start + Timestamp(Int.random(in: 1...600, using: &random)) * Micros.minute
                rows.append(Row(late, late + Micros.minute, 5, source))
            }
        }
        return rows
    }

    @Test("collections merged by lanes equal the row-by-row merge, sums and sums by source", arguments: [1, 2, 3, 4])
    func agree(seed: UInt64) throws {
        var random = SplitMix64(seed: TestSeed.value(seed) &* 31 &+ seed)
        let minutes = 3 * 1440
        let blocked = HealthStore(blockRows: Int.random(in: 8...60, using: &random))
        let plain = HealthStore(blockRows: SealedBlock.maxRows / 2)
        let watchRows = Self.rows(of: watch, minutes: minutes, every: 1...1, gaps: 6, outside: 0, using: &random)
        let phoneRows = Self.rows(of: phone, minutes: minutes, every: 1...9, gaps: 3, outside: 4, using: &random)
        let appRows = Self.rows(of: fitApp, minutes: minutes, every: 20...90, gaps: 1, outside: 2, using: &random)
        // The watch first, in order; the others arrive later, landing among sealed blocks.
        for source in [watchRows, phoneRows, appRows] {
            for chunk in stride(from: 0, to: source.count, by: 500) {
                let batch = makeBatch(type: "stepCount", rows: Array(source[chunk..<min(chunk + 500, source.count)]))
                #expect(try blocked.insert(batch) == plain.insert(batch))
            }
        }
        // The lanes hold what this test is about: blocks that mix sources are laned, every group of blocks is
        // read by lanes, and lower sources' lanes lie both wholly under the watch's cover and partly outside it.
        let (laned, readByLanes, under, partly) = try blocked.read(try QuantityType.named("stepCount")) { shard in
            let series = try #require(shard.series["anna"])
            let blocks = series.rows.blocks
            var sums = BucketSums(bounds: [Self.start, Self.start + Timestamp(minutes) * Micros.minute])
            var bySource: SumsBySource? = nil
            var (taken, under, partly) = (0, 0, 0)
            let ranks = series.sources.sourceRanks()
            for index in 1..<(blocks.count - 1) {
                let context = (index - 1)..<(index + 2)
                if series.addLanedSums(
                    context: context, fed: index..<(index + 1), sourceRanks: ranks, into: &sums, bySource: &bySource)
                {
                    taken += 1
                }
                let lanes = blocks[context].flatMap { $0.lanes.isEmpty ? [$0] : $0.lanes }
                let top = lanes.map { ranks[Int($0.summary.sources[0])] }.min()!
                var cover = LaneCover()
                var scratch: BlockScratch?
                for lane in lanes where ranks[Int(lane.summary.sources[0])] == top {
                    cover.add(lane, scratch: &scratch)
                }
                cover.finish()
                for lane in blocks[index].lanes where ranks[Int(lane.summary.sources[0])] != top {
                    if TimeSpan.lieUnderOne(cover.spans, lane.summary) { under += 1 } else { partly += 1 }
                }
            }
            return (blocks.filter { !$0.lanes.isEmpty }.count, taken == blocks.count - 2, under, partly)
        }
        #expect(laned > 10 && readByLanes && under > 3 && partly > 3, "\(laned) \(readByLanes) \(under) \(partly)")
        for zone in ["America/New_York", "UTC"] {
            for interval in [CalendarInterval(1, .hour), CalendarInterval(1, .day), CalendarInterval(15, .minute)] {
                for options: StatisticsOptions in [.cumulativeSum, [.cumulativeSum, .separateBySource]] {
                    let read = try blocked.collection(
                        subject: "anna", type: "stepCount", options: options, anchor: Self.start,
                        interval: interval, timeZone: zone)
                    let expected = try plain.collection(
                        subject: "anna", type: "stepCount", options: options, anchor: Self.start,
                        interval: interval, timeZone: zone)
                    #expect(
                        BlockedSeriesPropertyTests.agreeUpToRounding(read, expected),
                        "seed \(seed) \(zone) \(interval) \(options)")
                }
            }
        }
    }
}
