import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Category samples in the engine (HEALTHKIT.md §12): values checked on insert, value predicates, and the time
/// covered per value merged across sources, checked by hand.
@Suite("Category statistics")
struct CategoryStatisticsTests {
    static let sleepApp = SourceInfo(name: "SleepApp", bundleIdentifier: "com.example.sleep")
    static let hour: Timestamp = 3_600_000_000
    static let minute: Timestamp = 60_000_000
    /// 22:00 in Berlin on 2026-03-28, the night clocks spring forward (02:00 CET becomes 03:00 CEST).
    static let night = UTC.at("2026-03-28T21:00:00Z")

    /// An iPhone in bed 22:00–07:00, a Watch with stages 23:00–06:30 and a third-party app asleep 22:30–07:30
    /// (offsets from 22:00 local), with the next night's in-bed interval of 7 h from 23:00 CEST.
    static func sleepRows() -> [Row] {
        let t = night
        let h = hour
        let m = minute
        return [
            Row(t, t + 9 * h, 0, phone),  // inBed
            Row(t + 30 * m, t + 9 * h + 30 * m, 1, sleepApp),  // asleepUnspecified
            Row(t + 1 * h, t + 3 * h, 3, watch),  // asleepCore
            Row(t + 3 * h, t + 4 * h, 4, watch),  // asleepDeep
            Row(t + 4 * h, t + 4 * h + 15 * m, 2, watch),  // awake
            Row(t + 4 * h + 15 * m, t + 6 * h, 5, watch),  // asleepREM
            Row(t + 6 * h, t + 8 * h + 30 * m, 3, watch),  // asleepCore
            Row(UTC.at("2026-03-29T21:00:00Z"), UTC.at("2026-03-30T04:00:00Z"), 0, phone),  // next night in bed
        ]
    }

    static func sleepStore() throws -> HealthStore {
        let store = try store(type: "sleepAnalysis", rows: sleepRows())
        try store.setSourcePriority(subject: "anna", type: "sleepAnalysis", order: [watch, phone, sleepApp])
        return store
    }

    @Test(
        "per value, by hand: the Watch's stages where it has data, the app's sleep elsewhere, in bed only where nobody sleeps"
    )
    func handCheckedNight() throws {
        let store = try Self.sleepStore()
        let first = SampleFilter(date: DatePredicate(end: Self.night + 12 * Self.hour))
        let statistics = try store.statistics(
            subject: "anna", type: "sleepAnalysis", filter: first,
            options: [.duration, .separateByValue, .separateBySource])
        let h = Self.hour
        let m = Self.minute
        // 22:00–22:30 the iPhone's in bed alone; 22:30–23:00 and 06:30–07:30 the app's sleep (in bed yields to any
        // other value, whatever the order); 23:00–06:30 the Watch.
        #expect(statistics.figures.duration(ofValue: 0) == 30 * m)
        #expect(statistics.figures.duration(ofValue: 1) == 1 * h + 30 * m)
        #expect(statistics.figures.duration(ofValue: 2) == 15 * m)
        #expect(statistics.figures.duration(ofValue: 3) == 4 * h + 30 * m)
        #expect(statistics.figures.duration(ofValue: 4) == 1 * h)
        #expect(statistics.figures.duration(ofValue: 5) == 1 * h + 45 * m)
        #expect(statistics.figures.durationByValue?.map(\.value) == [0, 1, 2, 3, 4, 5])
        // The union: 22:00–07:30. Values never add up to more.
        #expect(statistics.figures.duration == 9 * h + 30 * m)
        let total = statistics.figures.durationByValue?.map(\.duration).reduce(0, +)
        #expect(total == 9 * h + 30 * m)
        // Each source's own figures, in priority order.
        #expect(statistics.bySource.map(\.source.name) == [watch.name, phone.name, Self.sleepApp.name])
        #expect(statistics.bySource[0].figures.duration(ofValue: 3) == 4 * h + 30 * m)
        #expect(statistics.bySource[0].figures.duration == 7 * h + 30 * m)
        #expect(statistics.bySource[1].figures.durationByValue == [ValueDuration(value: 0, duration: 9 * h)])
        #expect(statistics.bySource[2].figures.durationByValue == [ValueDuration(value: 1, duration: 9 * h)])
    }

    @Test("another priority order changes who wins, never the total")
    func priorityOrder() throws {
        let store = try Self.sleepStore()
        try store.setSourcePriority(subject: "anna", type: "sleepAnalysis", order: [Self.sleepApp, phone, watch])
        let first = SampleFilter(date: DatePredicate(end: Self.night + 12 * Self.hour))
        let figures = try store.statistics(
            subject: "anna", type: "sleepAnalysis", filter: first, options: [.separateByValue]
        ).figures
        let h = Self.hour
        let m = Self.minute
        // The app covers 22:30–07:30; the iPhone only 22:00–22:30; the Watch nothing.
        #expect(
            figures.durationByValue == [
                ValueDuration(value: 0, duration: 30 * m), ValueDuration(value: 1, duration: 9 * h),
            ])
        #expect(figures.duration == nil)
    }

    @Test("with the iPhone ranked first its in-bed interval still yields to the Watch's stages and the app's sleep")
    func envelopeYields() throws {
        let store = try Self.sleepStore()
        try store.setSourcePriority(subject: "anna", type: "sleepAnalysis", order: [phone, watch, Self.sleepApp])
        let first = SampleFilter(date: DatePredicate(end: Self.night + 12 * Self.hour))
        let figures = try store.statistics(
            subject: "anna", type: "sleepAnalysis", filter: first, options: [.separateByValue]
        ).figures
        let h = Self.hour
        let m = Self.minute
        // The same partition as with the Watch first: the iPhone outranks nobody with its in bed.
        #expect(
            figures.durationByValue == [
                ValueDuration(value: 0, duration: 30 * m), ValueDuration(value: 1, duration: 1 * h + 30 * m),
                ValueDuration(value: 2, duration: 15 * m), ValueDuration(value: 3, duration: 4 * h + 30 * m),
                ValueDuration(value: 4, duration: 1 * h), ValueDuration(value: 5, duration: 1 * h + 45 * m),
            ])
    }

    @Test("nights anchored at 18:00 in Berlin: one bucket per night, 23 hours long across spring-forward")
    func nightsAcrossDST() throws {
        let store = try Self.sleepStore()
        let buckets = try store.collection(
            subject: "anna", type: "sleepAnalysis", options: [.separateByValue, .duration],
            anchor: UTC.at("2026-03-01T17:00:00Z"), interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin")
        #expect(buckets.count == 2)
        let h = Self.hour
        let m = Self.minute
        // 2026-03-28 18:00 CET to 2026-03-29 18:00 CEST: 23 hours.
        #expect(buckets[0].start == UTC.at("2026-03-28T17:00:00Z"))
        #expect(buckets[0].end == UTC.at("2026-03-29T16:00:00Z"))
        #expect(buckets[0].figures.duration(ofValue: 0) == 30 * m)
        #expect(buckets[0].figures.duration(ofValue: 3) == 4 * h + 30 * m)
        #expect(buckets[0].figures.duration == 9 * h + 30 * m)
        #expect(buckets[1].start == UTC.at("2026-03-29T16:00:00Z"))
        #expect(buckets[1].figures.durationByValue == [ValueDuration(value: 0, duration: 7 * h)])
    }

    @Test("a live collection's touched nights carry the per-value times, as the one-off collection does")
    func liveCollectionBuckets() throws {
        let store = try Self.sleepStore()
        let anchor = UTC.at("2026-03-01T17:00:00Z")
        let touched = try store.collectionBuckets(
            subject: "anna", type: "sleepAnalysis", options: [.separateByValue], anchor: anchor,
            interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin",
            touching: [Self.night...(Self.night + Self.hour)])
        let full = try store.collection(
            subject: "anna", type: "sleepAnalysis", options: [.separateByValue], anchor: anchor,
            interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin")
        #expect(touched.count == 1)
        #expect(touched.first == full.first)
    }

    @Test("a sample straddling the night boundary is split between the nights")
    func straddlingBoundary() throws {
        let store = try store(
            type: "sleepAnalysis",
            rows: [Row(UTC.at("2026-01-10T16:00:00Z"), UTC.at("2026-01-10T18:00:00Z"), 1, watch)])
        let buckets = try store.collection(
            subject: "anna", type: "sleepAnalysis", options: [.separateByValue],
            anchor: UTC.at("2026-01-01T17:00:00Z"), interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin")
        #expect(buckets.map { $0.figures.duration(ofValue: 1) } == [Self.hour, Self.hour])
    }

    @Test("value predicate: only the listed values; a value outside the enumeration is refused by name")
    func valuePredicate() throws {
        let store = try Self.sleepStore()
        let stages = SampleFilter(values: .category([4, 5]))
        let result = try store.samples(subject: "anna", type: "sleepAnalysis", filter: stages)
        #expect(result.values == [4, 5])
        let stats = try store.statistics(
            subject: "anna", type: "sleepAnalysis", filter: stages, options: [.separateByValue])
        #expect(stats.figures.durationByValue?.map(\.value) == [4, 5])
        let error = healthError {
            _ = try store.samples(subject: "anna", type: "sleepAnalysis", filter: SampleFilter(values: .category([9])))
        }
        #expect(error?.code.rawValue == ErrorCode.invalidPredicate.rawValue)
        #expect(error?.message.contains("9 is not a value of category type sleepAnalysis") == true)
        let onQuantity = healthError {
            _ = try store.samples(subject: "anna", type: "stepCount", filter: SampleFilter(values: .category([1])))
        }
        #expect(onQuantity?.code.rawValue == ErrorCode.invalidPredicate.rawValue)
    }

    @Test("inserts: an out-of-range value is refused naming value and type; quantity options are refused")
    func insertAndOptionRules() throws {
        let store = HealthStore()
        let error = healthError {
            _ = try store.insert(makeBatch(type: "sleepAnalysis", rows: [Row(0, sec(60), 6, watch)]))
        }
        #expect(error?.code.rawValue == ErrorCode.invalidSample.rawValue)
        #expect(error?.message.contains("6 is not a value of category type sleepAnalysis") == true)
        let unit = healthError {
            _ = try store.insert(makeBatch(type: "sleepAnalysis", unit: "count", rows: [Row(0, sec(60), 1, watch)]))
        }
        #expect(unit?.code.rawValue == ErrorCode.incompatibleUnit.rawValue)
        _ = try store.insert(makeBatch(type: "sleepAnalysis", unit: "", rows: [Row(0, sec(60), 1, watch)]))
        let sum = healthError {
            _ = try store.statistics(subject: "anna", type: "sleepAnalysis", options: [.cumulativeSum])
        }
        #expect(sum?.message == "cumulativeSum is not valid for category type sleepAnalysis")
        let byValue = healthError {
            _ = try store.statistics(subject: "anna", type: "stepCount", options: [.separateByValue])
        }
        #expect(byValue?.code.rawValue == ErrorCode.invalidOptions.rawValue)
    }

    /// The per-value coverage computed the slow way: every elementary segment on its own, the winner the
    /// best-ranked covering sample's source, its highest covering value counting.
    static func referenceCoverage(_ samples: [(start: Timestamp, end: Timestamp, value: Int, rank: Int)]) -> [Int:
        Int64]
    {
        let cuts = Set(samples.flatMap { [$0.start, $0.end] }).sorted()
        var result: [Int: Int64] = [:]
        for (x, y) in zip(cuts, cuts.dropFirst()) {
            let covering = samples.filter { $0.start <= x && y <= $0.end && $0.start < $0.end }
            guard !covering.isEmpty else { continue }
            // In bed (0) competes only where no sample says anything else.
            let asleep = covering.filter { $0.value != 0 }
            guard let best = asleep.map(\.rank).min() else {
                result[0, default: 0] += y - x
                continue
            }
            let value = asleep.filter { $0.rank == best }.map(\.value).max()!
            result[value, default: 0] += y - x
        }
        return result
    }

    @Test("seeded random nights agree with the slow reference")
    func randomAgainstReference() throws {
        var random = SplitMix64(seed: 0x5EED_0017)
        print("CategoryStatisticsTests seed 0x5EED0017")
        let sources = [watch, phone, Self.sleepApp]
        for _ in 0..<30 {
            var rows: [Row] = []
            var reference: [(start: Timestamp, end: Timestamp, value: Int, rank: Int)] = []
            for _ in 0..<Int.random(in: 1...25, using: &random) {
                let start = Timestamp(Int.random(in: 0..<600, using: &random)) * Self.minute
                let end = start + Timestamp(Int.random(in: 0..<120, using: &random)) * Self.minute
                let value = Int.random(in: 0...5, using: &random)
                let rank = Int.random(in: 0..<3, using: &random)
                rows.append(Row(start, end, Double(value), sources[rank]))
                reference.append((start, end, value, rank))
            }
            let store = try store(type: "sleepAnalysis", rows: rows)
            try store.setSourcePriority(subject: "anna", type: "sleepAnalysis", order: sources)
            let expected = Self.referenceCoverage(reference)
            let figures = try store.statistics(
                subject: "anna", type: "sleepAnalysis", options: [.separateByValue]
            ).figures
            let got = Dictionary(uniqueKeysWithValues: (figures.durationByValue ?? []).map { ($0.value, $0.duration) })
            #expect(got == expected.filter { $0.value > 0 })
        }
    }
}
