import Foundation
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

    @Test("several sources' sums and other figures are computed whole, parts or not")
    func othersWhole() throws {
        for typeName in ["stepCount", "heartRate"] {
            let type = try QuantityType.named(typeName)
            // Odd seeds write from up to three sources.
            let (store, _) = try BlockedSeriesPropertyTests.stores(type: typeName, seed: 3, steps: 60)
            let series = try #require(store.read(type) { $0.series["anna"] })
            let optionSets: [StatisticsOptions] =
                typeName == "stepCount"
                ? [.cumulativeSum, [.cumulativeSum, .separateBySource], [.duration, .mostRecent]]
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
        // W2's five years of per-minute rows make a part per core (up to six); a day of them makes one.
        #expect(Series.partCount(rows: 2_629_800) == min(6, ProcessInfo.processInfo.activeProcessorCount))
        #expect(Series.partCount(rows: 1440) <= 1)
    }
}
