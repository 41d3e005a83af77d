import HealthModel
import Testing

@testable import HealthEngine

/// Per-bucket figures that follow the bucket: duration is the time covered inside it, most recent is the most
/// recent sample overlapping it (with that sample's interval); zero-length buckets are never listed.
@Suite("collection figures per bucket")
struct CollectionBucketFigureTests {
    static let nine = UTC.at("2024-05-01T09:00:00Z")
    static func at(_ minutes: Int) -> Timestamp { nine + Int64(minutes) * Micros.minute }

    static func hourly(_ store: HealthStore, type: String, _ options: StatisticsOptions) throws -> [Statistics] {
        try store.collection(
            subject: "anna", type: try QuantityType.named(type), options: options, anchor: nine,
            interval: CalendarInterval(1, .hour),
            timeZone: "UTC")
    }

    @Test("a two-hour sample covers each hour it touches; the most recent is the sample overlapping the hour")
    func durationAndMostRecentFollowTheBucket() throws {
        // 09:30–11:30 at 70 bpm, and a reading of 80 at 10:15.
        let heart = try store(
            type: "heartRate", rows: [Row(Self.at(30), Self.at(150), 70), Row(Self.at(75), Self.at(75), 80)])
        let buckets = try Self.hourly(heart, type: "heartRate", [.duration, .mostRecent, .discreteMax])
        #expect(buckets.map(\.start) == [Self.at(0), Self.at(60), Self.at(120)])
        #expect(buckets.map(\.figures.duration) == [30 * Micros.minute, 60 * Micros.minute, 30 * Micros.minute])
        let long = MostRecent(value: 70, start: Self.at(30), end: Self.at(150))
        #expect(buckets.map(\.figures.mostRecent) == [long, long, long])
        // The maximum still comes from the samples starting in the hour; 11:00 has none.
        #expect(buckets.map(\.figures.maximum) == [70, 80, nil])
    }

    @Test("overlaps count once within a bucket, across sources; a later sample is the most recent")
    func overlapsCountOnce() throws {
        let steps = try store(
            type: "stepCount",
            rows: [Row(Self.at(0), Self.at(40), 100, phone), Row(Self.at(20), Self.at(60), 100, watch)])
        let buckets = try Self.hourly(steps, type: "stepCount", [.duration, .mostRecent, .cumulativeSum])
        #expect(buckets.count == 1)
        #expect(buckets[0].figures.duration == 60 * Micros.minute)
        #expect(buckets[0].figures.mostRecent == MostRecent(value: 100, start: Self.at(20), end: Self.at(60)))
    }

    @Test("a zone's skipped local day (Pacific/Apia, 2011-12-30) is never a bucket of its own")
    func zeroLengthBucketsAreNotListed() throws {
        let start = UTC.at("2011-12-29T12:00:00Z")
        let steps = try store(type: "stepCount", rows: [Row(start, start + 48 * Micros.hour, 48)])
        for (from, to) in [
            (Optional(UTC.at("2011-12-29T10:00:00Z")), Optional(UTC.at("2011-12-31T12:00:00Z"))), (nil, nil),
        ] {
            let days = try steps.collection(
                subject: "anna", type: "stepCount", options: [.cumulativeSum, .duration],
                anchor: UTC.at("2011-12-28T10:00:00Z"), interval: CalendarInterval(1, .day), timeZone: "Pacific/Apia",
                enumerateFrom: from, enumerateTo: to)
            #expect(days.allSatisfy { $0.start < $0.end }, "\(days.map { ($0.start, $0.end) })")
            #expect(Set(days.map(\.start)).count == days.count)
            #expect(close(days.reduce(0) { $0 + ($1.figures.sum ?? 0) }, 48))
            #expect(days.reduce(0) { $0 + ($1.figures.duration ?? 0) } == 48 * Micros.hour)
        }
    }
}
