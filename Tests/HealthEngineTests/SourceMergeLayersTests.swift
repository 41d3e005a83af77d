import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// The layered merge (the fast path) against the heap sweep it replaces, on inputs built to hit the edges of the
/// coverage: samples on a coarse grid so that many end exactly where others start, point samples on those
/// boundaries, nested samples, revisions of one source, up to five identities in random priority order, and
/// selections with gaps. Sums must agree to 1e-12 relative (they differ only in the order of additions); the
/// buckets a sample reaches must agree exactly.
@Suite("Source merge by layers")
struct SourceMergeLayersTests {
    static let sources: [SourceInfo] = [
        watch, phone, fitApp, runApp, manualApp,
        SourceInfo(name: "FitApp", bundleIdentifier: "com.example.fit", version: "2.0"),
    ]

    /// Random rows on a 10 µs grid between 0 and 2,000 µs: a fifth are points, lengths 10 µs up to
    /// `longest` grid steps, some nested inside a longer sample. Short samples leave long stretches between
    /// coverage boundaries (the bulk path); long ones send most rows through the one-by-one path.
    static func rows(
        count: Int, sources: ArraySlice<SourceInfo>, longest: Int64 = 30, using random: inout SplitMix64
    ) -> [Row] {
        var rows: [Row] = []
        for _ in 0..<count {
            let source = sources.randomElement(using: &random)!
            let value = Double(Int.random(in: 0...90, using: &random))
            if let outer = rows.randomElement(using: &random), outer.end - outer.start >= 20,
                Int.random(in: 0..<4, using: &random) == 0
            {
                // Nested: strictly inside, or sharing one boundary with the outer sample.
                let start = Timestamp.random(in: outer.start / 10...(outer.end / 10 - 1), using: &random) * 10
                let end = Timestamp.random(in: (start / 10 + 1)...(outer.end / 10), using: &random) * 10
                rows.append(Row(start, end, value, source))
                continue
            }
            let start = Timestamp.random(in: 0..<200, using: &random) * 10
            let length =
                Int.random(in: 0..<5, using: &random) == 0 ? 0 : Timestamp.random(in: 1...longest, using: &random) * 10
            rows.append(Row(start, start + length, value, source))
        }
        return rows
    }

    /// A random subset of the rows as a selection (so several runs), or all of them.
    static func selection(count: Int, using random: inout SplitMix64) -> Selection {
        var selection = Selection()
        let keepAll = Bool.random(using: &random)
        for row in 0..<count where keepAll || Int.random(in: 0..<4, using: &random) != 0 { selection.add(row) }
        return selection
    }

    @Test("layers give the sweep's sums and touched buckets on boundary-heavy random inputs", arguments: 0..<40)
    func matchesSweep(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed) &* 7919 &+ 17)
        let sources = Self.sources.prefix(Int.random(in: 2...Self.sources.count, using: &random))
        let rows = Self.rows(
            count: Int.random(in: 1...160, using: &random), sources: sources, longest: seed % 2 == 0 ? 30 : 2,
            using: &random)
        var series = Series(type: try QuantityType.named("stepCount"))
        series.append(try PreparedBatch(makeBatch(type: "stepCount", rows: rows)))
        series.sources.setPriority(Array(sources).shuffled(using: &random))
        let ranks = series.sources.sourceRanks()
        let rankCount = series.sources.identities.count
        let selection = Self.selection(count: series.count, using: &random)
        let context = "seed \(seed), \(rows.count) rows, \(sources.count) sources"

        // Without a duration bound the first pass measures it; with one it skips the lowest rank's intervals.
        let bound = Bool.random(using: &random) ? series.maxDuration : nil
        series.withColumns { c in
            for window in [nil, 0..<2_000, 300..<310, 555..<1_440] as [Range<Timestamp>?] {
                for maxDuration in [nil, series.maxDuration] {
                    var fast = WindowTotal(window: window)
                    var slow = WindowTotal(window: window)
                    let layered = SourceMerge.layered(
                        c, selection, sourceRanks: ranks, maxDuration: maxDuration, into: &fast)
                    SourceMerge.sweep(c, selection, sourceRanks: ranks, rankCount: rankCount, into: &slow)
                    #expect(layered == !selection.isEmpty, "\(context)")
                    #expect(
                        close(fast.total, slow.total, tolerance: 1e-12),
                        "\(context) window \(String(describing: window)) bound \(String(describing: maxDuration))")
                }
            }
            // Buckets of 10–200 µs from a boundary on or off the grid, not always covering all the data.
            let width = Timestamp.random(in: 1...20, using: &random) * 10
            let first = Timestamp.random(in: -50...500, using: &random) + (Bool.random(using: &random) ? 0 : 5)
            let bounds = Array(
                stride(from: first, through: first + width * Int64.random(in: 1...15, using: &random), by: Int(width)))
            var fast = BucketSums(bounds: bounds)
            var slow = BucketSums(bounds: bounds)
            _ = SourceMerge.layered(c, selection, sourceRanks: ranks, maxDuration: bound, into: &fast)
            SourceMerge.sweep(c, selection, sourceRanks: ranks, rankCount: rankCount, into: &slow)
            #expect(fast.touched == slow.touched, "\(context) bounds \(bounds)")
            for (a, b) in zip(fast.sums, slow.sums) {
                #expect(close(a, b, tolerance: 1e-12), "\(context) bounds \(bounds)")
            }
        }
    }

    @Test("hand-made edges: abutting samples, points on boundaries, nested, three sources")
    func handMadeEdges() throws {
        // Priority watch > phone > fitApp (phone and watch are Apple: first seen first; fitApp third-party).
        let rows = [
            Row(0, 100, 100, watch),  // watch 0–100
            Row(100, 200, 50, phone),  // phone starts where the watch ends: counts in full
            Row(50, 150, 40, fitApp),  // fitApp under both: nothing left
            Row(100, 100, 7, fitApp),  // point at 100: phone covers 100, dropped
            Row(100, 100, 3, watch),  // point at 100, watch ranks above phone: counts
            Row(200, 200, 5, fitApp),  // point where everything ended: counts
            Row(220, 300, 80, fitApp),  // fitApp alone 220–300, but the phone covers 250–260 inside it
            Row(250, 260, 9, phone),  // nested phone: wins its 10 µs
            Row(250, 250, 4, phone),  // point of phone at 250, beside fitApp's covering sample: counts
        ]
        var series = Series(type: try QuantityType.named("stepCount"))
        series.append(try PreparedBatch(makeBatch(type: "stepCount", rows: rows)))
        #expect(series.sources.priorityList() == [watch, phone, fitApp])
        // 100 + 50 + 0 + 0 + 3 + 5 + (80 − 10) + 9 + 4 = 241.
        let ranked = rows.map {
            RankedSample(
                start: $0.start, end: $0.end, value: $0.value, rank: [watch, phone, fitApp].firstIndex(of: $0.source)!)
        }
        #expect(close(referenceMergedSum(ranked, window: nil), 241))
        let total = series.withColumns { c in series.mergedSum(c, series.select(.all), window: nil) }
        #expect(close(total, 241))
        let buckets = series.withColumns { c in
            var sums = BucketSums(bounds: [0, 100, 200, 255, 400])
            SourceMerge.merge(
                c, series.select(.all), sourceRanks: series.sources.sourceRanks(),
                rankCount: series.sources.identities.count, maxDuration: series.maxDuration, into: &sums)
            return sums.sums
        }
        // [0,100): 100. [100,200): 3 + 50. [200,255): 5 + fitApp 220–250 (30) + phone 250–255 (4.5) + point 4.
        // [255,300): phone 255–260 (4.5) + fitApp 260–300 (40).
        #expect(zip(buckets, [100, 53, 43.5, 44.5]).allSatisfy { close($0, $1) }, "\(buckets)")
    }

    @Test("more identities than the layers take: the sweep answers, and it matches the reference")
    func manyIdentitiesFallBack() throws {
        var random = SplitMix64(seed: 99)
        let many = (0...SourceMerge.layerLimit).map {
            SourceInfo(name: "App \($0)", bundleIdentifier: "com.example.app\($0)")
        }
        let rows = Self.rows(count: 200, sources: many[...], using: &random) + many.map { Row(0, 10, 1, $0) }
        var series = Series(type: try QuantityType.named("stepCount"))
        series.append(try PreparedBatch(makeBatch(type: "stepCount", rows: rows)))
        let ranks = series.sources.sourceRanks()
        let priority = series.sources.priorityList()
        let rankOf = Dictionary(uniqueKeysWithValues: priority.enumerated().map { ($1, $0) })
        series.withColumns { c in
            var unused = WindowTotal(window: nil)
            #expect(
                !SourceMerge.layered(
                    c, series.select(.all), sourceRanks: ranks, maxDuration: series.maxDuration, into: &unused))
            #expect(unused.total == 0)
            let merged = series.mergedSum(c, series.select(.all), window: nil)
            let ranked = rows.map {
                RankedSample(start: $0.start, end: $0.end, value: $0.value, rank: rankOf[$0.source]!)
            }
            #expect(close(merged, referenceMergedSum(ranked, window: nil)))
        }
    }

    @Test("union of interval lists joins touching and overlapping intervals")
    func unionOfSpans() {
        let a = [TimeSpan(start: 0, end: 10), TimeSpan(start: 20, end: 30), TimeSpan(start: 50, end: 60)]
        let b = [TimeSpan(start: 10, end: 15), TimeSpan(start: 25, end: 40), TimeSpan(start: 70, end: 80)]
        #expect(
            TimeSpan.union(a, b) == [
                TimeSpan(start: 0, end: 15), TimeSpan(start: 20, end: 40), TimeSpan(start: 50, end: 60),
                TimeSpan(start: 70, end: 80),
            ])
        #expect(TimeSpan.union([], b) == b)
    }
}
