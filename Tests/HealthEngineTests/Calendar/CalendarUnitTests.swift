import HealthModel
import Testing

@testable import HealthEngine

/// Months and years add from the anchor in one step and clamp to the month's last day (HEALTHKIT.md §7).
@Suite struct CalendarUnitTests {
    @Test func monthlyFromJanuary31() throws {
        // Jan 31 00:00 EST; every later month clamps from the anchor, not from the previous bucket.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-01-31T05:00:00Z"), interval: .init(1, .month), timeZoneIdentifier: "America/New_York")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2023-11-30T05:00:00Z"), to: UTC.at("2024-05-01T00:00:00Z"))
        #expect(boundaries.firstBucketNumber == -2)
        #expect(
            boundaries.starts == [
                UTC.at("2023-11-30T05:00:00Z"), UTC.at("2023-12-31T05:00:00Z"), UTC.at("2024-01-31T05:00:00Z"),
                UTC.at("2024-02-29T05:00:00Z"), UTC.at("2024-03-31T04:00:00Z"), UTC.at("2024-04-30T04:00:00Z"),
                UTC.at("2024-05-31T04:00:00Z"),
            ])
    }

    @Test func monthlyBackwardsIntoALeapFebruary() throws {
        // Mar 30, 2002 minus 25 months is Feb 29, 2000 (Foundation 6.3's date(byAdding:) says Feb 28 here),
        // minus 49 months is Feb 28, 1998 (Foundation says Mar 1).
        let calendar = try BucketCalendar(
            anchor: UTC.at("2002-03-30T02:15:00Z"), interval: .init(1, .month), timeZoneIdentifier: "UTC")
        #expect(try calendar.bucket(containing: UTC.at("2000-03-01T00:00:00Z")).start == UTC.at("2000-02-29T02:15:00Z"))
        #expect(try calendar.bucket(containing: UTC.at("2000-03-01T00:00:00Z")).number == -25)
        #expect(try calendar.bucket(containing: UTC.at("1998-03-01T00:00:00Z")).start == UTC.at("1998-02-28T02:15:00Z"))
    }

    @Test func yearlyFromFebruary29() throws {
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-02-29T12:00:00Z"), interval: .init(1, .year), timeZoneIdentifier: "UTC")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2020-03-01T00:00:00Z"), to: UTC.at("2028-03-01T00:00:00Z"))
        #expect(boundaries.firstBucketNumber == -4)
        #expect(
            boundaries.starts
                == [
                    "2020-02-29", "2021-02-28", "2022-02-28", "2023-02-28", "2024-02-29", "2025-02-28", "2026-02-28",
                    "2027-02-28", "2028-02-29", "2029-02-28",
                ].map { UTC.at("\($0)T12:00:00Z") })
    }

    @Test func quarterlyAndBiennialCounts() throws {
        let quarterly = try BucketCalendar(
            anchor: UTC.at("2024-01-01T00:00:00Z"), interval: .init(3, .month), timeZoneIdentifier: "UTC")
        #expect(
            try quarterly.bucket(containing: UTC.at("2024-08-15T00:00:00Z"))
                == Bucket(number: 2, start: UTC.at("2024-07-01T00:00:00Z"), end: UTC.at("2024-10-01T00:00:00Z")))
        let biennial = try BucketCalendar(
            anchor: UTC.at("2024-01-01T00:00:00Z"), interval: .init(2, .year), timeZoneIdentifier: "UTC")
        #expect(
            try biennial.bucket(containing: UTC.at("2021-06-01T00:00:00Z"))
                == Bucket(number: -2, start: UTC.at("2020-01-01T00:00:00Z"), end: UTC.at("2022-01-01T00:00:00Z")))
    }

    @Test func aSkippedLocalDayIsAnEmptyBucket() throws {
        // Pacific/Apia jumped from -10 to +14 and skipped 2011-12-30. Buckets keep their dates: Dec 30's bucket
        // starts and ends at Dec 31 00:00 (+14); an instant there belongs to Dec 31's bucket.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2011-12-28T10:00:00Z"), interval: .init(1, .day), timeZoneIdentifier: "Pacific/Apia")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2011-12-29T12:00:00Z"), to: UTC.at("2011-12-31T12:00:00Z"))
        #expect(boundaries.firstBucketNumber == 1)
        #expect(
            boundaries.starts == [
                UTC.at("2011-12-29T10:00:00Z"), UTC.at("2011-12-30T10:00:00Z"), UTC.at("2011-12-30T10:00:00Z"),
                UTC.at("2011-12-31T10:00:00Z"), UTC.at("2012-01-01T10:00:00Z"),
            ])
        #expect(boundaries.bucketIndex(of: UTC.at("2011-12-30T10:00:00Z")) == 2)
        #expect(boundaries.bucketIndex(of: UTC.at("2011-12-30T09:59:59Z")) == 0)
    }
}
