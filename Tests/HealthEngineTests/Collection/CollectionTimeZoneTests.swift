import HealthModel
import Testing

@testable import HealthEngine

/// The time-zone matrix of HEALTHKIT.md §7 through the whole collection query: daily step sums around DST
/// changes and odd offsets. The data is one step a minute, so each day's sum is its length in minutes, and every
/// expected figure is written out by hand.
@Suite struct CollectionTimeZoneTests {
    struct ZoneDay: Sendable, CustomTestStringConvertible {
        var zone: String
        /// A local midnight early in the year, fixing the buckets' phase.
        var anchor: String
        /// The local midnight that starts the day under test (UTC).
        var dayStart: String
        /// That day's length in minutes.
        var minutes: Int64
        var testDescription: String { "\(zone) \(dayStart)" }
    }

    static let days: [ZoneDay] = [
        // 2024-03-10 02:00 EST → 03:00 EDT; 2024-11-03 02:00 EDT → 01:00 EST.
        .init(
            zone: "America/New_York", anchor: "2024-01-01T05:00:00Z", dayStart: "2024-03-10T05:00:00Z", minutes: 1380),
        .init(
            zone: "America/New_York", anchor: "2024-01-01T05:00:00Z", dayStart: "2024-11-03T04:00:00Z", minutes: 1500),
        // 2024-03-31 02:00 CET → 03:00 CEST; 2024-10-27 03:00 CEST → 02:00 CET.
        .init(zone: "Europe/Berlin", anchor: "2023-12-31T23:00:00Z", dayStart: "2024-03-30T23:00:00Z", minutes: 1380),
        .init(zone: "Europe/Berlin", anchor: "2023-12-31T23:00:00Z", dayStart: "2024-10-26T22:00:00Z", minutes: 1500),
        // +05:30 all year: local midnight at 18:30 UTC.
        .init(zone: "Asia/Kolkata", anchor: "2023-12-31T18:30:00Z", dayStart: "2024-03-10T18:30:00Z", minutes: 1440),
        // +05:45 all year: local midnight at 18:15 UTC.
        .init(zone: "Asia/Kathmandu", anchor: "2023-12-31T18:15:00Z", dayStart: "2024-03-10T18:15:00Z", minutes: 1440),
        // 30-minute shifts: 2024-04-07 02:00 (+11) → 01:30 (+10:30); 2024-10-06 02:00 (+10:30) → 02:30 (+11).
        .init(
            zone: "Australia/Lord_Howe", anchor: "2023-12-31T13:00:00Z", dayStart: "2024-04-06T13:00:00Z", minutes: 1470
        ),
        .init(
            zone: "Australia/Lord_Howe", anchor: "2023-12-31T13:00:00Z", dayStart: "2024-10-05T13:30:00Z", minutes: 1410
        ),
        // 2-hour shifts: 2024-03-31 01:00 +00 → 03:00 +02; 2024-10-27 03:00 +02 → 01:00 +00.
        .init(
            zone: "Antarctica/Troll", anchor: "2024-01-01T00:00:00Z", dayStart: "2024-03-31T00:00:00Z", minutes: 1320),
        .init(
            zone: "Antarctica/Troll", anchor: "2024-01-01T00:00:00Z", dayStart: "2024-10-26T22:00:00Z", minutes: 1560),
    ]

    @Test("the day before, the day itself and the day after: boundaries and sums", arguments: days)
    func threeDays(_ day: ZoneDay) throws {
        let start = UTC.at(day.dayStart)
        let end = start + day.minutes * Micros.minute
        // The neighbouring days of these cases are ordinary 24-hour days.
        let store = try store(
            type: "stepCount", rows: stepsPerMinute(from: start - Micros.day, to: end + Micros.day))
        let buckets = try store.stepCollection(anchor: UTC.at(day.anchor), zone: day.zone)
        #expect(buckets.map(\.start) == [start - Micros.day, start, end])
        #expect(buckets.map(\.end) == [start, end, end + Micros.day])
        #expect(buckets.map(\.figures.sum) == [1440, Double(day.minutes), 1440])
    }

    @Test("samples that do not line up with local midnight are pro-rated across it", arguments: days)
    func straddlingSamples(_ day: ZoneDay) throws {
        let start = UTC.at(day.dayStart)
        let end = start + day.minutes * Micros.minute
        // 50-minute samples from 7 minutes before the day: the first and last ones straddle midnights.
        let rows = stepsPerMinute(from: start - 7 * Micros.minute, to: end + 11 * Micros.minute, minutes: 50)
        let store = try store(type: "stepCount", rows: rows)
        let buckets = try store.stepCollection(anchor: UTC.at(day.anchor), zone: day.zone)
        #expect(buckets.map(\.start) == [start - Micros.day, start, end])
        let sums = buckets.compactMap(\.figures.sum)
        #expect(sums.count == 3)
        #expect(close(sums[0], 7) && close(sums[1], Double(day.minutes)) && close(sums[2], 11))
    }

    @Test("a day without data just before a DST day: absent, or listed empty when enumerating", arguments: days)
    func emptyDayBefore(_ day: ZoneDay) throws {
        let start = UTC.at(day.dayStart)
        let end = start + day.minutes * Micros.minute
        let store = try store(type: "stepCount", rows: stepsPerMinute(from: start, to: end))
        let anchor = UTC.at(day.anchor)
        let dataOnly = try store.stepCollection(anchor: anchor, zone: day.zone)
        #expect(dataOnly.map(\.start) == [start])
        #expect(dataOnly.map(\.figures.sum) == [Double(day.minutes)])
        let enumerated = try store.stepCollection(
            anchor: anchor, zone: day.zone, from: start - Micros.day + Micros.hour * 3, to: end)
        #expect(enumerated.map(\.start) == [start - Micros.day, start, end])
        #expect(enumerated.map(\.figures.sum) == [nil, Double(day.minutes), nil])
        #expect(enumerated[0].figures == StatisticsFigures() && enumerated[0].end == start)
    }

    @Test("a sample exactly on a boundary belongs to the later bucket; one ending there only to the earlier")
    func sampleOnBoundary() throws {
        // New York, spring-forward day 2024-03-10 starts 05:00Z; the next day starts 2024-03-11T04:00Z.
        let midnight = UTC.at("2024-03-11T04:00:00Z")
        let water = [
            Row(midnight, midnight, 250),  // a point on the boundary
            Row(midnight - Micros.hour, midnight, 100),  // ends on the boundary
            Row(midnight, midnight + Micros.hour, 40),  // starts on it
        ]
        let store = try store(type: "dietaryWater", rows: water)
        let buckets = try store.stepCollection(
            anchor: UTC.at("2024-01-01T05:00:00Z"), zone: "America/New_York", type: "dietaryWater")
        #expect(buckets.map(\.start) == [UTC.at("2024-03-10T05:00:00Z"), midnight])
        #expect(buckets.map(\.figures.sum) == [100, 290])
        // Discrete types: a reading on the boundary goes to the later bucket too.
        let pulse = HealthStore()
        _ = try pulse.insert(
            makeBatch(type: "heartRate", rows: [Row(midnight, midnight, 70), Row(midnight - 1, midnight - 1, 50)]))
        let heart = try pulse.collection(
            subject: "anna", type: "heartRate", options: [.discreteMax], anchor: UTC.at("2024-01-01T05:00:00Z"),
            interval: .init(1, .day), timeZone: "America/New_York")
        #expect(heart.map(\.start) == [UTC.at("2024-03-10T05:00:00Z"), midnight])
        #expect(heart.map(\.figures.maximum) == [50, 70])
    }

    @Test("partial first and last buckets keep their full boundaries and hold only what they cover")
    func partialBuckets() throws {
        // Kathmandu, hourly buckets anchored at a local midnight: boundaries at hh:15 UTC.
        let store = try store(
            type: "stepCount", rows: [Row(UTC.at("2024-05-01T10:35:00Z"), UTC.at("2024-05-01T12:55:00Z"), 140)])
        let buckets = try store.stepCollection(
            interval: .init(1, .hour), anchor: UTC.at("2023-12-31T18:15:00Z"), zone: "Asia/Kathmandu")
        #expect(
            buckets.map(\.start) == ["10:15", "11:15", "12:15"].map { UTC.at("2024-05-01T\($0):00Z") })
        #expect(buckets.last?.end == UTC.at("2024-05-01T13:15:00Z"))
        let sums = buckets.compactMap(\.figures.sum)
        #expect(sums.count == 3 && close(sums[0], 40) && close(sums[1], 60) && close(sums[2], 40))
        // Enumerating a range that starts and ends mid-bucket lists the whole buckets holding its ends.
        let enumerated = try store.stepCollection(
            interval: .init(1, .hour), anchor: UTC.at("2023-12-31T18:15:00Z"), zone: "Asia/Kathmandu",
            from: UTC.at("2024-05-01T11:50:00Z"), to: UTC.at("2024-05-01T13:20:00Z"))
        #expect(enumerated.map(\.start) == ["11:15", "12:15", "13:15"].map { UTC.at("2024-05-01T\($0):00Z") })
        #expect(enumerated.count == 3 && close(enumerated[0].figures.sum, 60) && close(enumerated[1].figures.sum, 40))
        #expect(enumerated.last?.figures.sum == nil)
    }
}
