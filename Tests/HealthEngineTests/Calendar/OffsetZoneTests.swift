import HealthModel
import Testing

@testable import HealthEngine

/// Zones whose offset is not a whole number of hours (HEALTHKIT.md §7): midnights at :30 and :15 UTC.
@Suite struct OffsetZoneTests {
    @Test(arguments: [
        // Asia/Kolkata +05:30: 2024-06-16 00:00 IST is 2024-06-15 18:30Z, 167 days after 2024-01-01.
        (
            "Asia/Kolkata", "2023-12-31T18:30:00Z", "2024-06-15T20:00:00Z", 167, "2024-06-15T18:30:00Z",
            "2024-06-16T18:30:00Z"
        ),
        // Asia/Kathmandu +05:45: 2024-03-01 00:00 is 2024-02-29 18:15Z, 60 days after 2024-01-01.
        (
            "Asia/Kathmandu", "2023-12-31T18:15:00Z", "2024-03-01T05:00:00Z", 60, "2024-02-29T18:15:00Z",
            "2024-03-01T18:15:00Z"
        ),
        // Before the anchor: 2023-12-25 in Kathmandu is bucket -7.
        (
            "Asia/Kathmandu", "2023-12-31T18:15:00Z", "2023-12-25T00:00:00Z", -7, "2023-12-24T18:15:00Z",
            "2023-12-25T18:15:00Z"
        ),
    ])
    func localMidnights(zone: String, anchor: String, instant: String, number: Int, start: String, end: String) throws {
        let calendar = try BucketCalendar(anchor: UTC.at(anchor), interval: .init(1, .day), timeZoneIdentifier: zone)
        #expect(
            try calendar.bucket(containing: UTC.at(instant))
                == Bucket(number: number, start: UTC.at(start), end: UTC.at(end)))
    }

    @Test func quarterHoursInKathmandu() throws {
        // Anchored at local midnight (18:15Z): quarter-hour buckets fall on :00/:15/:30/:45 UTC as well.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2023-12-31T18:15:00Z"), interval: .init(15, .minute), timeZoneIdentifier: "Asia/Kathmandu")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2024-06-01T06:07:00Z"), to: UTC.at("2024-06-01T06:30:00Z"))
        #expect(boundaries.firstBucketNumber == 14_639)
        #expect(
            boundaries.starts == [
                UTC.at("2024-06-01T06:00:00Z"), UTC.at("2024-06-01T06:15:00Z"), UTC.at("2024-06-01T06:30:00Z"),
                UTC.at("2024-06-01T06:45:00Z"),
            ])
    }

    @Test func hoursInKathmanduStartAtQuarterPast() throws {
        let calendar = try BucketCalendar(
            anchor: UTC.at("2023-12-31T18:15:00Z"), interval: .init(1, .hour), timeZoneIdentifier: "Asia/Kathmandu")
        let bucket = try calendar.bucket(containing: UTC.at("2024-01-01T00:10:00Z"))
        #expect(bucket == Bucket(number: 5, start: UTC.at("2023-12-31T23:15:00Z"), end: UTC.at("2024-01-01T00:15:00Z")))
    }
}
