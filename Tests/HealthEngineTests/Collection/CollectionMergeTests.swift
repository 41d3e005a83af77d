import HealthModel
import Testing

@testable import HealthEngine

/// Merging overlapping sources inside collection buckets (HEALTHKIT.md §8).
@Suite struct CollectionMergeTests {
    /// Watch 08:00–09:00, 1,200 steps; iPhone 08:30–09:30, 900 steps; iPhone 23:30–00:30 across midnight, 600.
    static let rows = [
        Row(UTC.at("2024-06-01T08:00:00Z"), UTC.at("2024-06-01T09:00:00Z"), 1200, watch),
        Row(UTC.at("2024-06-01T08:30:00Z"), UTC.at("2024-06-01T09:30:00Z"), 900, phone),
        Row(UTC.at("2024-06-01T23:30:00Z"), UTC.at("2024-06-02T00:30:00Z"), 600, phone),
    ]

    @Test("iPhone + Watch: the merged daily sum is hand-computed, the by-source sums are the raw sums")
    func iPhoneAndWatch() throws {
        let store = try store(type: "stepCount", rows: Self.rows)
        let buckets = try store.stepCollection(
            anchor: UTC.at("2024-01-01T00:00:00Z"), zone: "UTC", options: [.cumulativeSum, .separateBySource])
        #expect(buckets.map(\.start) == [UTC.at("2024-06-01T00:00:00Z"), UTC.at("2024-06-02T00:00:00Z")])
        // Day 1: Watch 1,200 (it outranks the iPhone over 08:30–09:00), iPhone alone 09:00–09:30 (450) and
        // 23:30–24:00 (300): 1,950. Day 2: the iPhone's last half hour, 300.
        #expect(buckets.map(\.figures.sum) == [1950, 300])
        #expect(buckets[0].bySource.map(\.source) == [watch, phone])
        #expect(buckets[0].bySource.map(\.figures.sum) == [1200, 1200])
        #expect(buckets[1].bySource.map(\.source) == [phone])
        #expect(buckets[1].bySource.map(\.figures.sum) == [300])
        // Summed over the buckets, each source's figures are its raw samples' sums.
        let perSource = Dictionary(
            buckets.flatMap(\.bySource).map { ($0.source, $0.figures.sum ?? 0) }, uniquingKeysWith: +)
        #expect(perSource == [watch: 1200, phone: 1500])
        // The merged sums add up to the plain statistics query's merged sum.
        let plain = try store.statistics(subject: "anna", type: "stepCount", options: .cumulativeSum)
        #expect(buckets.compactMap(\.figures.sum).reduce(0, +) == plain.figures.sum)
    }

    @Test("with the iPhone first, it wins 08:30–09:30 and the Watch keeps only 08:00–08:30")
    func priorityOrder() throws {
        let store = try store(type: "stepCount", rows: Self.rows)
        try store.setSourcePriority(subject: "anna", type: "stepCount", order: [phone, watch])
        let buckets = try store.stepCollection(interval: .init(1, .hour), anchor: 0, zone: "UTC")
        // 08:00 hour: Watch 600 (08:00–08:30) + iPhone 450; 09:00 hour: iPhone 450; 23:00: 300; 00:00: 300.
        #expect(buckets.map(\.figures.sum) == [1050, 450, 300, 300])
    }

    @Test("a source filter leaves one source: its sums are not merged away")
    func sourceFilter() throws {
        let store = try store(type: "stepCount", rows: Self.rows)
        let onlyPhone = SampleFilter(sources: [phone.bundleIdentifier])
        let buckets = try store.stepCollection(anchor: 0, zone: "UTC", filter: onlyPhone)
        #expect(buckets.map(\.figures.sum) == [1200, 300])
    }
}
