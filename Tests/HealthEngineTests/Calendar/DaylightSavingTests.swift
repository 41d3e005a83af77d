import HealthModel
import Testing

@testable import HealthEngine

/// Buckets across DST changes (HEALTHKIT.md §7): calendar units keep the local wall time, fixed units keep
/// elapsed time. Every expected instant is written out by hand.
@Suite struct DaylightSavingTests {
    /// One day-bucket case: zone, anchor (a local midnight), the instant asked about, and the bucket expected
    /// around it with its length in minutes.
    struct DayCase: Sendable, CustomTestStringConvertible {
        var zone: String
        var anchor: String
        var instant: String
        var start: String
        var end: String
        var minutes: Int64
        var testDescription: String { "\(zone) \(start)" }
    }

    static let dayCases: [DayCase] = [
        // America/New_York: 2024-03-10 02:00 EST → 03:00 EDT; 2024-11-03 02:00 EDT → 01:00 EST.
        .init(
            zone: "America/New_York", anchor: "2024-01-01T05:00:00Z", instant: "2024-03-10T12:00:00Z",
            start: "2024-03-10T05:00:00Z", end: "2024-03-11T04:00:00Z", minutes: 23 * 60),
        .init(
            zone: "America/New_York", anchor: "2024-01-01T05:00:00Z", instant: "2024-11-03T12:00:00Z",
            start: "2024-11-03T04:00:00Z", end: "2024-11-04T05:00:00Z", minutes: 25 * 60),
        // Europe/Berlin: 2024-03-31 02:00 CET → 03:00 CEST; 2024-10-27 03:00 CEST → 02:00 CET.
        .init(
            zone: "Europe/Berlin", anchor: "2023-12-31T23:00:00Z", instant: "2024-03-31T12:00:00Z",
            start: "2024-03-30T23:00:00Z", end: "2024-03-31T22:00:00Z", minutes: 23 * 60),
        .init(
            zone: "Europe/Berlin", anchor: "2023-12-31T23:00:00Z", instant: "2024-10-27T12:00:00Z",
            start: "2024-10-26T22:00:00Z", end: "2024-10-27T23:00:00Z", minutes: 25 * 60),
        // Australia/Lord_Howe shifts by 30 minutes: 2024-04-07 02:00 (+11) → 01:30 (+10:30), 2024-10-06
        // 02:00 (+10:30) → 02:30 (+11).
        .init(
            zone: "Australia/Lord_Howe", anchor: "2023-12-31T13:00:00Z", instant: "2024-04-07T00:00:00Z",
            start: "2024-04-06T13:00:00Z", end: "2024-04-07T13:30:00Z", minutes: 24 * 60 + 30),
        .init(
            zone: "Australia/Lord_Howe", anchor: "2023-12-31T13:00:00Z", instant: "2024-10-06T00:00:00Z",
            start: "2024-10-05T13:30:00Z", end: "2024-10-06T13:00:00Z", minutes: 23 * 60 + 30),
        // Antarctica/Troll shifts by 2 hours: 2024-03-31 01:00 +00 → 03:00 +02; 2024-10-27 03:00 +02 → 01:00 +00.
        .init(
            zone: "Antarctica/Troll", anchor: "2024-01-01T00:00:00Z", instant: "2024-03-31T12:00:00Z",
            start: "2024-03-31T00:00:00Z", end: "2024-03-31T22:00:00Z", minutes: 22 * 60),
        .init(
            zone: "Antarctica/Troll", anchor: "2024-01-01T00:00:00Z", instant: "2024-10-27T12:00:00Z",
            start: "2024-10-26T22:00:00Z", end: "2024-10-28T00:00:00Z", minutes: 26 * 60),
    ]

    @Test(arguments: dayCases)
    func dayBucketFollowsLocalMidnights(_ testCase: DayCase) throws {
        let calendar = try BucketCalendar(
            anchor: UTC.at(testCase.anchor), interval: .init(1, .day), timeZoneIdentifier: testCase.zone)
        let bucket = try calendar.bucket(containing: UTC.at(testCase.instant))
        #expect(bucket.start == UTC.at(testCase.start))
        #expect(bucket.end == UTC.at(testCase.end))
        #expect(bucket.end - bucket.start == testCase.minutes * Micros.minute)
        // The day before and the day after are ordinary 24-hour days.
        let around = try calendar.boundaries(from: bucket.start - 1, to: bucket.end)
        #expect(around.count == 3)
        #expect(around[0].end - around[0].start == Micros.day)
        #expect(around[2].end - around[2].start == Micros.day)
    }

    @Test func hourlyBucketsStayOneHourAcrossTheGap() throws {
        // Anchored at midnight EST on 2024-03-10: local 01:00 EST, then 03:00 and 04:00 EDT.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-03-10T05:00:00Z"), interval: .init(1, .hour), timeZoneIdentifier: "America/New_York")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2024-03-10T06:30:00Z"), to: UTC.at("2024-03-10T08:30:00Z"))
        #expect(boundaries.firstBucketNumber == 1)
        #expect(
            boundaries.starts == [
                UTC.at("2024-03-10T06:00:00Z"), UTC.at("2024-03-10T07:00:00Z"), UTC.at("2024-03-10T08:00:00Z"),
                UTC.at("2024-03-10T09:00:00Z"),
            ])
    }

    @Test func hourlyBucketsStayOneHourAcrossTheOverlap() throws {
        // 2024-11-03: 01:00 EDT (05:00Z), 01:00 EST (06:00Z), 02:00 EST (07:00Z): two buckets both show 01:00.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-11-03T04:00:00Z"), interval: .init(1, .hour), timeZoneIdentifier: "America/New_York")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2024-11-03T05:00:00Z"), to: UTC.at("2024-11-03T06:59:59Z"))
        #expect(boundaries.firstBucketNumber == 1)
        #expect(
            boundaries.starts == [
                UTC.at("2024-11-03T05:00:00Z"), UTC.at("2024-11-03T06:00:00Z"), UTC.at("2024-11-03T07:00:00Z"),
            ])
    }

    /// Weekly buckets from a Monday midnight: 167 hours over spring-forward, 169 over fall-back.
    @Test(arguments: [
        ("America/New_York", "2024-03-04T05:00:00Z", "2024-03-11T04:00:00Z", Int64(167)),
        ("Europe/Berlin", "2024-10-20T22:00:00Z", "2024-10-27T23:00:00Z", 169),
    ])
    func weeklyBucketsAcrossDST(zone: String, monday: String, nextMonday: String, hours: Int64) throws {
        let calendar = try BucketCalendar(anchor: UTC.at(monday), interval: .init(1, .week), timeZoneIdentifier: zone)
        let bucket = try calendar.bucket(containing: UTC.at(monday) + 3 * Micros.day)
        #expect(bucket == Bucket(number: 0, start: UTC.at(monday), end: UTC.at(nextMonday)))
        #expect(bucket.end - bucket.start == hours * Micros.hour)
    }

    @Test func anchorAt0334GivesA0334PhaseEveryDay() throws {
        // Anchor 2024-03-20 03:34 CET; in Berlin 03:34 exists every day, before and after the change.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-03-20T02:34:00Z"), interval: .init(1, .day), timeZoneIdentifier: "Europe/Berlin")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2024-03-30T12:00:00Z"), to: UTC.at("2024-04-01T12:00:00Z"))
        #expect(boundaries.firstBucketNumber == 10)
        #expect(
            boundaries.starts == [
                UTC.at("2024-03-30T02:34:00Z"),  // 03:34 CET
                UTC.at("2024-03-31T01:34:00Z"),  // 03:34 CEST: that bucket lasts 23 hours
                UTC.at("2024-04-01T01:34:00Z"), UTC.at("2024-04-02T01:34:00Z"),
            ])
        // Bucket numbers before the anchor are negative, at the same phase.
        let before = try calendar.bucket(containing: UTC.at("2024-03-01T00:00:00Z"))
        #expect(
            before == Bucket(number: -20, start: UTC.at("2024-02-29T02:34:00Z"), end: UTC.at("2024-03-01T02:34:00Z")))
    }

    @Test func phaseInTheSpringForwardGapMovesLaterByTheGap() throws {
        // Anchor 02:30 EST on 2024-03-09. 02:30 does not exist on 2024-03-10: like Foundation, 03:30 EDT.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-03-09T07:30:00Z"), interval: .init(1, .day), timeZoneIdentifier: "America/New_York")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2024-03-09T07:30:00Z"), to: UTC.at("2024-03-11T12:00:00Z"))
        #expect(
            boundaries.starts == [
                UTC.at("2024-03-09T07:30:00Z"), UTC.at("2024-03-10T07:30:00Z"), UTC.at("2024-03-11T06:30:00Z"),
                UTC.at("2024-03-12T06:30:00Z"),
            ])
        // The gap day's bucket is 23 hours, the one after it 24 (02:30 EDT to 02:30 EDT).
        #expect(boundaries[0].end - boundaries[0].start == 24 * Micros.hour)
        #expect(boundaries[1].end - boundaries[1].start == 23 * Micros.hour)
    }

    @Test func repeatedPhaseTakesTheFirstOccurrenceGoingForward() throws {
        // Anchor 01:30 EDT on 2024-11-01; 01:30 occurs twice on 2024-11-03: bucket 2 starts at the first.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-11-01T05:30:00Z"), interval: .init(1, .day), timeZoneIdentifier: "America/New_York")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2024-11-03T12:00:00Z"), to: UTC.at("2024-11-03T12:00:00Z"))
        #expect(boundaries.firstBucketNumber == 2)
        #expect(boundaries.starts == [UTC.at("2024-11-03T05:30:00Z"), UTC.at("2024-11-04T06:30:00Z")])
    }

    @Test func repeatedPhaseKeepsTheAnchorsOffsetGoingBackward() throws {
        // Anchor 01:30 EST on 2024-11-05: counting back, Foundation keeps the EST occurrence on 2024-11-03.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-11-05T06:30:00Z"), interval: .init(1, .day), timeZoneIdentifier: "America/New_York")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2024-11-02T12:00:00Z"), to: UTC.at("2024-11-03T12:00:00Z"))
        #expect(boundaries.firstBucketNumber == -3)
        #expect(
            boundaries.starts == [
                UTC.at("2024-11-02T05:30:00Z"),  // 01:30 EDT
                UTC.at("2024-11-03T06:30:00Z"),  // 01:30 EST, the second occurrence: a 25-hour bucket before it
                UTC.at("2024-11-04T06:30:00Z"),
            ])
    }
}
