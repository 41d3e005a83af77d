import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// A sample for the reference merge (also used by the collection tests): interval, value, and its source's rank (0 = highest priority).
struct RankedSample {
    var start: Timestamp
    var end: Timestamp
    var value: Double
    var rank: Int
}

/// The merged sum of HEALTHKIT.md §8, computed the slow and obvious way: every elementary segment and every
/// instant of a point sample on its own, looking at every sample each time.
func referenceMergedSum(_ samples: [RankedSample], window: Range<Timestamp>?) -> Double {
    var boundaries = Set(samples.flatMap { [$0.start, $0.end] })
    if let window { boundaries.formUnion([window.lowerBound, window.upperBound]) }
    let cuts = boundaries.sorted()
    var total = 0.0
    for (x, y) in zip(cuts, cuts.dropFirst()) {
        if let window, !(window.lowerBound <= x && y <= window.upperBound) { continue }
        let covering = samples.filter { $0.start < $0.end && $0.start <= x && y <= $0.end }
        guard let best = covering.map(\.rank).min() else { continue }
        for sample in covering where sample.rank == best {
            total += sample.value * Double(y - x) / Double(sample.end - sample.start)
        }
    }
    let points = samples.filter { $0.start == $0.end }
    for instant in Set(points.map(\.start)) {
        if let window, !window.contains(instant) { continue }
        let here = points.filter { $0.start == instant }
        let coveringRanks = samples.filter { $0.start < $0.end && $0.start <= instant && instant < $0.end }.map(\.rank)
        let best = (here.map(\.rank) + coveringRanks).min()!
        total += here.filter { $0.rank == best }.map(\.value).reduce(0, +)
    }
    return total
}

@Suite("Source merge")
struct SourceMergeTests {
    /// Watch: 600 steps over 0–600 s (1/s). iPhone: 300 steps over 300–900 s (0.5/s).
    private static let overlapRows = [Row(0, sec(600), 600, watch), Row(sec(300), sec(900), 300, phone)]

    @Test(
        "iPhone and Watch overlap: the higher-priority source wins the shared stretch",
        arguments: [
            // Watch first: 300 (watch alone) + 300 (watch wins 300–600) + 150 (iPhone alone) = 750.
            ([watch, phone], 750.0),
            // iPhone first: 300 (watch alone) + 150 + 150 (iPhone, 300–900) = 600.
            ([phone, watch], 600.0),
        ])
    func iPhoneAndWatch(order: [SourceInfo], expected: Double) throws {
        let store = try store(type: "stepCount", rows: Self.overlapRows)
        try store.setSourcePriority(subject: "anna", type: "stepCount", order: order)
        let statistics = try store.statistics(
            subject: "anna", type: "stepCount", options: [.cumulativeSum, .separateBySource])
        #expect(close(statistics.figures.sum, expected))
        #expect(statistics.bySource.map(\.source) == order)
        let bySource = Dictionary(uniqueKeysWithValues: statistics.bySource.map { ($0.source, $0.figures.sum) })
        #expect(bySource == [watch: 600, phone: 300], "each source's own raw sum")
        let raw = try store.samples(subject: "anna", type: "stepCount").values.reduce(0, +)
        #expect(statistics.bySource.compactMap(\.figures.sum).reduce(0, +) == raw)
    }

    @Test("default priority: user-entered, then Apple, then newer third-party above older")
    func defaultPriority() throws {
        let store = HealthStore()
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(0, sec(100), 100, fitApp)]))
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(0, sec(100), 50, watch)]))
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(0, sec(100), 70, runApp)]))
        _ = try store.insert(
            makeBatch(type: "stepCount", rows: [Row(0, sec(10), 10, manualApp, userEntered: true)]))
        #expect(try store.sourcePriority(subject: "anna", type: "stepCount") == [manualApp, watch, runApp, fitApp])
        // Manual entry wins 0–10 s (10); the Watch wins 10–100 s (50 · 0.9).
        let merged = try store.statistics(subject: "anna", type: "stepCount", options: .cumulativeSum)
        #expect(close(merged.figures.sum, 55))
    }

    @Test("setting the priority changes the merged sum; unlisted and unseen sources keep their place")
    func settingPriority() throws {
        let store = HealthStore()
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(0, sec(100), 100, fitApp)]))
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(0, sec(100), 50, watch)]))
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(sec(50), sec(150), 70, runApp)]))
        let before = try store.statistics(subject: "anna", type: "stepCount", options: .cumulativeSum)
        // Watch 0–100 (50), RunApp alone 100–150 (35).
        #expect(close(before.figures.sum, 85))
        let unseen = SourceInfo(name: "Scale", bundleIdentifier: "com.example.scale")
        try store.setSourcePriority(subject: "anna", type: "stepCount", order: [fitApp, unseen])
        #expect(try store.sourcePriority(subject: "anna", type: "stepCount") == [fitApp, unseen, watch, runApp])
        // FitApp 0–100 (100), RunApp alone 100–150 (35).
        let after = try store.statistics(subject: "anna", type: "stepCount", options: .cumulativeSum)
        #expect(close(after.figures.sum, 135))
        // Another subject and another type keep the default.
        _ = try store.insert(makeBatch(type: "distanceWalkingRunning", rows: [Row(0, sec(100), 1, fitApp)]))
        _ = try store.insert(makeBatch(type: "distanceWalkingRunning", rows: [Row(0, sec(100), 2, watch)]))
        let other = try store.statistics(subject: "anna", type: "distanceWalkingRunning", options: .cumulativeSum)
        #expect(close(other.figures.sum, 2))
    }

    @Test("a new revision of a source is the same source for priority and merging")
    func revisionsAreOneSource() throws {
        var newWatch = watch
        newWatch.version = "11.2"
        let store = try store(
            type: "stepCount", rows: [Row(0, sec(100), 100, watch), Row(sec(50), sec(150), 100, newWatch)])
        let statistics = try store.statistics(
            subject: "anna", type: "stepCount", options: [.cumulativeSum, .separateBySource])
        #expect(statistics.figures.sum == 200)
        #expect(statistics.bySource.map(\.source) == [newWatch])
    }

    @Test("point samples count unless a higher-priority source covers their instant")
    func pointSamples() throws {
        // Watch covers 0–100 s; the iPhone logs 5 at 50 s (covered: dropped) and 7 at 100 s (not covered: counts).
        let rows = [Row(0, sec(100), 100, watch), Row(sec(50), sec(50), 5, phone), Row(sec(100), sec(100), 7, phone)]
        let store = try store(type: "dietaryWater", rows: rows)
        let statistics = try store.statistics(subject: "anna", type: "dietaryWater", options: .cumulativeSum)
        #expect(close(statistics.figures.sum, 107))
    }

    @Test(
        "the merged sum matches the slow reference on random samples", arguments: [11, 12, 13, 14, 15, 16] as [UInt64])
    func matchesReference(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let sources = [watch, phone, fitApp, runApp]
        let rows = (0..<Int.random(in: 1...120, using: &generator)).map { _ -> Row in
            let start = Timestamp.random(in: 0..<1000, using: &generator) * 1000
            let length =
                Int.random(in: 0..<5, using: &generator) == 0
                ? 0 : Timestamp.random(in: 1...200, using: &generator) * 1000
            return Row(
                start, start + length, Double(Int.random(in: 0...100, using: &generator)),
                sources.randomElement(using: &generator)!)
        }
        var series = Series(type: try QuantityType.named("stepCount"))
        series.append(try PreparedBatch(makeBatch(type: "stepCount", rows: rows)))
        let order = sources.shuffled(using: &generator)
        series.sources.setPriority(order)
        let rank = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        let ranked = rows.map { RankedSample(start: $0.start, end: $0.end, value: $0.value, rank: rank[$0.source]!) }
        let windows: [Range<Timestamp>?] = [nil, 0..<1_200_000, 250_000..<400_000, 999_000..<1_000_000]
        for window in windows {
            let fast = series.withColumns { c in series.mergedSum(c, series.select(.all), window: window) }
            let slow = referenceMergedSum(ranked, window: window)
            #expect(close(fast, slow, tolerance: 1e-9), "window \(String(describing: window))")
        }
        // Through the store with a predicate: the selected samples count without clipping.
        let store = try store(type: "stepCount", rows: rows)
        try store.setSourcePriority(subject: "anna", type: "stepCount", order: order)
        let predicate = DatePredicate(start: 300_000, end: 700_000)
        let selected = zip(rows, ranked).filter { predicate.matches(start: $0.0.start, end: $0.0.end) }.map(\.1)
        let error = healthError {
            let statistics = try store.statistics(
                subject: "anna", type: "stepCount", filter: SampleFilter(date: predicate), options: .cumulativeSum)
            #expect(close(statistics.figures.sum, referenceMergedSum(selected, window: nil), tolerance: 1e-9))
        }
        #expect(error == nil || selected.isEmpty)
    }
}
