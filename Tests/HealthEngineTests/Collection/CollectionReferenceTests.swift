import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// The collection query against a slow, obviously correct reference on random samples: random sources and
/// priorities, overlaps, point samples, zones, intervals, anchors, predicates and enumeration ranges.
///
/// The reference takes its boundaries from Foundation one bucket at a time (``ReferenceBucketCalendar``) and
/// computes each bucket's merged sum segment by segment over every sample (``referenceMergedSum``), each
/// source's own sum the same way over that source alone, and minimum and maximum from the samples starting in
/// the bucket.
@Suite struct CollectionReferenceTests {
    static let zones = [
        "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe",
        "Antarctica/Troll", "UTC",
    ]
    static let intervals: [CalendarInterval] = [
        .init(15, .minute), .init(1, .hour), .init(5, .hour), .init(1, .day), .init(2, .day), .init(1, .week),
        .init(1, .month),
    ]
    /// Around Europe's and New York's spring-forward of 2024, so most zones see a transition.
    static let origin = UTC.at("2024-03-08T00:00:00Z")

    @Test("sums merged, by source, and min/max match the reference", arguments: 0..<24)
    func matchesReference(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed) &* 104_729 &+ 3)
        let zone = Self.zones.randomElement(using: &random)!
        let interval = Self.intervals.randomElement(using: &random)!
        let sources = [watch, phone, fitApp, runApp].prefix(Int.random(in: 1...4, using: &random))
        let span = 6 * Micros.day
        let rows = (0..<Int.random(in: 1...150, using: &random)).map { _ -> Row in
            let start = Self.origin + Int64.random(in: 0..<span / Micros.minute, using: &random) * Micros.minute
            let length: Int64 =
                Int.random(in: 0..<6, using: &random) == 0
                ? 0 : Int64.random(in: 1...(Bool.random(using: &random) ? 30 : 900), using: &random) * Micros.minute
            return Row(
                start, start + length, Double(Int.random(in: 0...500, using: &random)),
                sources.randomElement(using: &random)!)
        }
        let order = Array(sources).shuffled(using: &random)
        let rank = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        let anchor = Self.origin + Int64.random(in: -30 * Micros.day...30 * Micros.day, using: &random)
        let predicate =
            Bool.random(using: &random)
            ? DatePredicate()
            : DatePredicate(start: Self.origin + Micros.day, end: Self.origin + 4 * Micros.day)
        let enumeration: (Timestamp, Timestamp)? =
            Bool.random(using: &random) ? nil : (Self.origin + Micros.day / 2, Self.origin + 5 * Micros.day)

        let water = try store(type: "dietaryWater", rows: rows)
        try water.setSourcePriority(subject: "anna", type: "dietaryWater", order: order)
        let buckets = try water.collection(
            subject: "anna", type: "dietaryWater", filter: SampleFilter(date: predicate),
            options: [.cumulativeSum, .separateBySource], anchor: anchor, interval: interval, timeZone: zone,
            enumerateFrom: enumeration?.0, enumerateTo: enumeration?.1)

        let selected = rows.filter { predicate.matches(start: $0.start, end: $0.end) }
        let ranked = selected.map {
            RankedSample(start: $0.start, end: $0.end, value: $0.value, rank: rank[$0.source]!)
        }
        let reference = ReferenceBucketCalendar(anchor: anchor, interval: interval, timeZoneIdentifier: zone)
        let context = "seed \(seed): \(zone) \(interval) anchor \(anchor) \(order.map(\.name))"

        // The buckets to expect: every one in the enumeration, or those a selected sample reaches.
        var expectedNumbers: [Int]
        if let (from, to) = enumeration {
            expectedNumbers = Array(reference.bucketNumber(containing: from)...reference.bucketNumber(containing: to))
        } else if let first = selected.map(\.start).min(), let last = selected.map({ max($0.start, $0.end - 1) }).max()
        {
            expectedNumbers = (reference.bucketNumber(containing: first)...reference.bucketNumber(containing: last))
                .filter { number in
                    let window = reference.start(ofBucket: number)..<reference.start(ofBucket: number + 1)
                    return selected.contains { Self.reaches($0, window) }
                }
        } else {
            expectedNumbers = []
        }
        #expect(buckets.count == expectedNumbers.count, "\(context)")
        for (bucket, number) in zip(buckets, expectedNumbers) {
            let window = reference.start(ofBucket: number)..<reference.start(ofBucket: number + 1)
            #expect(bucket.start == window.lowerBound && bucket.end == window.upperBound, "\(context) bucket \(number)")
            let reached = selected.filter { Self.reaches($0, window) }
            guard !reached.isEmpty else {
                #expect(bucket.figures.sum == nil && bucket.bySource.isEmpty, "\(context) bucket \(number)")
                continue
            }
            let merged = referenceMergedSum(ranked, window: window)
            #expect(close(bucket.figures.sum, merged, tolerance: 1e-9), "\(context) bucket \(number)")
            let expectedSources = order.filter { source in reached.contains { $0.source == source } }
            #expect(bucket.bySource.map(\.source) == expectedSources, "\(context) bucket \(number)")
            for own in bucket.bySource {
                let alone = ranked.indices.filter { selected[$0].source == own.source }.map { ranked[$0] }
                #expect(
                    close(own.figures.sum, referenceMergedSum(alone, window: window), tolerance: 1e-9), "\(context)")
            }
        }

        // Discrete: the same instants as heart-rate readings; min and max over the readings starting in a bucket.
        let pulse = try store(
            type: "heartRate", rows: rows.map { Row($0.start, $0.start, 40 + $0.value / 5, $0.source) })
        let heart = try pulse.collection(
            subject: "anna", type: "heartRate", options: [.discreteMin, .discreteMax], anchor: anchor,
            interval: interval, timeZone: zone)
        let readingsByBucket = Dictionary(grouping: rows) { reference.bucketNumber(containing: $0.start) }
        #expect(heart.count == readingsByBucket.count, "\(context)")
        for (bucket, number) in zip(heart, readingsByBucket.keys.sorted()) {
            let values = readingsByBucket[number]!.map { 40 + $0.value / 5 }
            #expect(bucket.start == reference.start(ofBucket: number), "\(context)")
            #expect(bucket.figures.minimum == values.min() && bucket.figures.maximum == values.max(), "\(context)")
        }
    }

    /// Whether a sample contributes to `window`: a positive overlap, or its instant inside.
    static func reaches(_ row: Row, _ window: Range<Timestamp>) -> Bool {
        row.start == row.end
            ? window.contains(row.start) : min(row.end, window.upperBound) > max(row.start, window.lowerBound)
    }
}
