import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// A collection of many rows is computed in parts on several cores (``Series/collectionInParts``); every part
/// reads the rows that reach its buckets, so the buckets are the same, figure for figure, as computed whole.
@Suite("Collections in parts")
struct CollectionPartsTests {
    /// Every bucket of `series`' collection of `filter`'s rows, whole and in 2 to 5 parts.
    static func collections(
        _ series: Series, type: QuantityType, filter: SampleFilter, options: StatisticsOptions,
        interval: CalendarInterval, zone: String, listEmpty: Bool
    ) throws -> (whole: [Statistics], inParts: [[Statistics]]) {
        let selection = series.select(try filter.validated(for: type))
        guard !selection.isEmpty else { return ([], []) }
        let calendar = try BucketCalendar(
            anchor: BlockedSeriesPropertyTests.start, interval: interval, timeZoneIdentifier: zone)
        let span = series.collectionSpan(of: selection, cumulative: Series.followsOverlaps(options))
        let boundaries = try calendar.boundaries(from: span.lowerBound, to: span.upperBound)
        let unit = try UnitTransform(type: type, unit: nil)
        func collection(parts: Int) -> [Statistics] {
            series.collection(
                of: selection, boundaries: boundaries, options: options, style: type.style, unit: unit,
                listEmpty: listEmpty, parts: parts)
        }
        return (collection(parts: 1), (2...5).map { collection(parts: $0) })
    }

    @Test(
        "one source's sums are the same bit for bit whole and in parts: random rows, filters, zones, intervals",
        arguments: [0, 2, 4, 6])
    func sameSums(seed: UInt64) throws {
        var random = SplitMix64(seed: TestSeed.value(seed) &+ 900)
        let type = try QuantityType.named("stepCount")
        // Even seeds write from one source (``BlockedSeriesPropertyTests/stores(type:seed:steps:)``).
        let (blocked, plain) = try BlockedSeriesPropertyTests.stores(type: "stepCount", seed: seed, steps: 60)
        for store in [blocked, plain] {
            let series = try #require(store.read(type) { $0.series["anna"] })
            #expect(series.isSingleIdentity(series.select(.all)), "one source: the collections are split")
            for _ in 0..<6 {
                let zone = ["America/New_York", "Europe/Berlin", "UTC"][Int.random(in: 0..<3, using: &random)]
                let intervals = [CalendarInterval(1, .hour), CalendarInterval(37, .minute), CalendarInterval(1, .day)]
                let interval = intervals[Int.random(in: 0..<3, using: &random)]
                let from =
                    BlockedSeriesPropertyTests.start + Timestamp(Int.random(in: 0...86_400, using: &random))
                    * Micros.second
                let filter =
                    Bool.random(using: &random)
                    ? SampleFilter.all : SampleFilter(date: DatePredicate(start: from, end: from + 2 * Micros.day))
                let (whole, inParts) = try Self.collections(
                    series, type: type, filter: filter, options: .cumulativeSum, interval: interval, zone: zone,
                    listEmpty: Bool.random(using: &random))
                #expect(!whole.isEmpty)
                for (index, parts) in inParts.enumerated() {
                    #expect(
                        parts.map(\.figures.sum?.bitPattern) == whole.map(\.figures.sum?.bitPattern),
                        "\(interval) \(zone): \(index + 2) parts")
                    #expect(parts == whole, "\(interval) \(zone): \(index + 2) parts")
                }
            }
        }
    }

    @Test("several sources' merged sums in parts: the same buckets, sums equal up to rounding, the same every time")
    func mergedSums() throws {
        let type = try QuantityType.named("stepCount")
        var random = SplitMix64(seed: TestSeed.value(5) &+ 77)
        for seed: UInt64 in [1, 3, 5] {
            // Odd seeds write from up to three sources.
            let (blocked, plain) = try BlockedSeriesPropertyTests.stores(type: "stepCount", seed: seed, steps: 60)
            for store in [blocked, plain] {
                let series = try #require(store.read(type) { $0.series["anna"] })
                #expect(!series.isSingleIdentity(series.select(.all)))
                for options: StatisticsOptions in [.cumulativeSum, [.cumulativeSum, .separateBySource]] {
                    let zone = ["America/New_York", "Europe/Berlin", "UTC"][Int.random(in: 0..<3, using: &random)]
                    let interval = [CalendarInterval(1, .hour), CalendarInterval(1, .day)][
                        Int.random(in: 0..<2, using: &random)]
                    let (whole, inParts) = try Self.collections(
                        series, type: type, filter: .all, options: options, interval: interval, zone: zone,
                        listEmpty: false)
                    let again = try Self.collections(
                        series, type: type, filter: .all, options: options, interval: interval, zone: zone,
                        listEmpty: false)
                    #expect(!whole.isEmpty)
                    #expect(again.inParts == inParts, "the same parts give the same bits")
                    for parts in inParts {
                        #expect(parts.map(\.start) == whole.map(\.start) && parts.map(\.end) == whole.map(\.end))
                        for (part, bucket) in zip(parts, whole) {
                            #expect(Self.close(part.figures.sum, bucket.figures.sum), "\(part) \(bucket)")
                            #expect(part.bySource.map(\.source) == bucket.bySource.map(\.source))
                            for (own, expected) in zip(part.bySource, bucket.bySource) {
                                #expect(Self.close(own.figures.sum, expected.figures.sum))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Both nil, or equal up to a relative 1e-12.
    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1)
    }

    @Test("figures other than sums are computed whole, parts or not")
    func othersWhole() throws {
        for typeName in ["stepCount", "heartRate"] {
            let type = try QuantityType.named(typeName)
            let (store, _) = try BlockedSeriesPropertyTests.stores(type: typeName, seed: 3, steps: 60)
            let series = try #require(store.read(type) { $0.series["anna"] })
            let optionSets: [StatisticsOptions] =
                typeName == "stepCount"
                ? [[.duration, .mostRecent], [.cumulativeSum, .duration]]
                : [[.discreteAverage, .discreteMin, .discreteMax], [.mostRecent, .separateBySource]]
            for options in optionSets {
                let (whole, inParts) = try Self.collections(
                    series, type: type, filter: .all, options: options, interval: CalendarInterval(1, .hour),
                    zone: "Europe/Berlin", listEmpty: false)
                #expect(!whole.isEmpty)
                #expect(inParts.allSatisfy { $0 == whole }, "\(typeName) \(options)")
            }
        }
    }

    @Test("the parts' bucket ranges cover every bucket once, in order, split where the rows divide")
    func bucketRanges() throws {
        let type = try QuantityType.named("stepCount")
        let (store, _) = try BlockedSeriesPropertyTests.stores(type: "stepCount", seed: 11, steps: 40)
        let series = try #require(store.read(type) { $0.series["anna"] })
        let selection = series.select(.all)
        let calendar = try BucketCalendar(
            anchor: BlockedSeriesPropertyTests.start, interval: CalendarInterval(1, .hour),
            timeZoneIdentifier: "UTC")
        let span = series.collectionSpan(of: selection, cumulative: true)
        let boundaries = try calendar.boundaries(from: span.lowerBound, to: span.upperBound)
        for parts in 1...6 {
            let ranges = series.bucketRanges(parts, of: selection, boundaries: boundaries)
            #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == boundaries.count)
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound && !$0.isEmpty })
            #expect(ranges.count <= parts && (parts == 1 || ranges.count > 1), "\(parts): \(ranges)")
        }
        // Fixed by the rows alone: two parts from 800,000 rows on (W2's 2,629,800), none for a day of minutes.
        #expect(Series.partCount(rows: 2_629_800) == 2)
        #expect(Series.partCount(rows: 799_999) == 1)
        #expect(Series.partCount(rows: 1440) == 0)
    }
}
