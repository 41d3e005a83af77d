import Foundation
import HealthModel
import Testing

@testable import HealthEngine

/// Instants at and beyond the edges of ``SupportedInstants``: refused at insert with the row named, and the
/// widest samples that are accepted never overflow a statistic or a collection.
@Suite("timestamps at the edges")
struct TimestampEdgeTests {
    static let first = SupportedInstants.range.lowerBound
    static let last = SupportedInstants.range.upperBound

    @Test(
        "an instant outside years 0001–9999 is refused with invalidSample naming the row",
        arguments: [
            (Int64.min, Int64(0)), (Int64.min + 1, Int64(-1)), (Int64(0), Int64.max), (first - 1, first),
            (last, last + 1), (Int64.min, Int64.min),
        ])
    func refusedAtInsert(start: Int64, end: Int64) {
        let store = HealthStore()
        let batch = makeBatch(type: "stepCount", rows: [Row(0, 60_000_000, 5), Row(start, end, 1)])
        let error = healthError { _ = try store.insert(batch) }
        #expect(error?.code.rawValue == ErrorCode.invalidSample.rawValue)
        #expect(error?.message.contains("row 1") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("0001–9999") == true, "\(error?.message ?? "")")
        #expect((try? store.samples(subject: "anna", type: "stepCount").starts.count) ?? 0 == 0)
    }

    @Test("samples spanning the whole supported range give exact statistics and collections")
    func widestSamples() throws {
        // Forty heart-rate samples each spanning all of years 0001–9999: their durations sum beyond Int64.
        let rows = (0..<40).map { _ in Row(Self.first, Self.last, 60) } + [Row(Self.last, Self.last, 60)]
        let heart = try store(type: "heartRate", rows: rows)
        let average = try heart.statistics(
            subject: "anna", type: "heartRate", options: [.discreteAverage, .duration, .mostRecent])
        #expect(close(average.figures.average, 60))
        #expect(average.figures.duration == Self.last - Self.first)

        let steps = try store(
            type: "stepCount",
            rows: [Row(Self.first + 1, -1, 10), Row(0, Self.last, 20), Row(Self.first, Self.first, 1)])
        let sums = try steps.statistics(subject: "anna", type: "stepCount", options: [.cumulativeSum, .duration])
        #expect(sums.figures.sum == 31)
        #expect(sums.figures.duration == Self.last - Self.first - 2)
        let years = try steps.collection(
            subject: "anna", type: "stepCount", options: [.cumulativeSum], anchor: 0,
            interval: CalendarInterval(1000, .year),
            timeZone: "UTC")
        #expect(close(years.reduce(0) { $0 + ($1.figures.sum ?? 0) }, 31, tolerance: 1e-6))
        let days = try steps.collection(
            subject: "anna", type: "stepCount", options: [.cumulativeSum], anchor: 0,
            interval: CalendarInterval(1, .day),
            timeZone: "Europe/Berlin", enumerateFrom: Self.first, enumerateTo: Self.first + 3 * Micros.day)
        #expect(days.first?.figures.sum != nil)
    }
}
