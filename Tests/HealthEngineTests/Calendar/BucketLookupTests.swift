import HealthModel
import Testing

@testable import HealthEngine

/// Boundaries of a range, lookup by binary search, enumeration with empty buckets, partial ends.
@Suite struct BucketLookupTests {
    /// Daily buckets at New York midnights, anchored on 2024-03-01.
    static func newYorkDays() throws -> BucketCalendar {
        try BucketCalendar(
            anchor: UTC.at("2024-03-01T05:00:00Z"), interval: .init(1, .day), timeZoneIdentifier: "America/New_York")
    }

    @Test func instantOnABoundaryBelongsToTheLaterBucket() throws {
        let boundaries = try Self.newYorkDays().boundaries(
            from: UTC.at("2024-03-09T12:00:00Z"), to: UTC.at("2024-03-12T12:00:00Z"))
        for position in 1..<boundaries.count {
            let boundary = boundaries.starts[position]
            #expect(boundaries.bucketIndex(of: boundary) == position)
            #expect(boundaries.bucketIndex(of: boundary - 1) == position - 1)
        }
        #expect(
            try Self.newYorkDays().bucket(containing: UTC.at("2024-03-11T04:00:00Z")).start
                == UTC.at("2024-03-11T04:00:00Z"))
        #expect(
            try Self.newYorkDays().bucket(containing: UTC.at("2024-03-11T03:59:59.999Z")).start
                == UTC.at("2024-03-10T05:00:00Z"))
    }

    @Test func lookupOutsideTheSpanIsNil() throws {
        let boundaries = try Self.newYorkDays().boundaries(
            from: UTC.at("2024-03-09T12:00:00Z"), to: UTC.at("2024-03-09T13:00:00Z"))
        #expect(boundaries.span == UTC.at("2024-03-09T05:00:00Z")..<UTC.at("2024-03-10T05:00:00Z"))
        #expect(boundaries.bucketIndex(of: UTC.at("2024-03-09T05:00:00Z") - 1) == nil)
        #expect(boundaries.bucketIndex(of: UTC.at("2024-03-10T05:00:00Z")) == nil)
        #expect(boundaries.bucketIndex(of: UTC.at("2024-03-09T05:00:00Z")) == 0)
    }

    @Test func firstAndLastBucketsExtendBeyondTheRange() throws {
        // 2024-03-09 12:00Z is 07:00 EST; 2024-03-11 03:00Z is 23:00 EDT on the 10th.
        let boundaries = try Self.newYorkDays().boundaries(
            from: UTC.at("2024-03-09T12:00:00Z"), to: UTC.at("2024-03-11T03:00:00Z"))
        #expect(
            Array(boundaries) == [
                Bucket(number: 8, start: UTC.at("2024-03-09T05:00:00Z"), end: UTC.at("2024-03-10T05:00:00Z")),
                Bucket(number: 9, start: UTC.at("2024-03-10T05:00:00Z"), end: UTC.at("2024-03-11T04:00:00Z")),
            ])
    }

    @Test func enumerationListsEveryBucketWhetherOrNotItHasData() throws {
        // All of March 2024 in New York: 31 contiguous days, the DST day among them, nothing skipped.
        let boundaries = try Self.newYorkDays().boundaries(
            from: UTC.at("2024-03-01T05:00:00Z"), to: UTC.at("2024-04-01T03:59:59Z"))
        #expect(boundaries.count == 31)
        #expect(boundaries.firstBucketNumber == 0)
        #expect(boundaries.map(\.number) == Array(0..<31))
        #expect(zip(boundaries.dropLast(), boundaries.dropFirst()).allSatisfy { $0.end == $1.start })
        #expect(boundaries.filter { $0.end - $0.start == 23 * Micros.hour }.map(\.number) == [9])
        #expect(boundaries.last?.end == UTC.at("2024-04-01T04:00:00Z"))
    }

    @Test func singleInstantRangeGivesOneBucket() throws {
        let boundaries = try Self.newYorkDays().boundaries(
            from: UTC.at("2024-03-05T05:00:00Z"), to: UTC.at("2024-03-05T05:00:00Z"))
        #expect(
            Array(boundaries) == [
                Bucket(number: 4, start: UTC.at("2024-03-05T05:00:00Z"), end: UTC.at("2024-03-06T05:00:00Z"))
            ])
    }

    @Test func fixedUnitsCountElapsedTimeFromTheAnchor() throws {
        // 45-second buckets from 00:00:10Z; negative numbers before the anchor.
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-01-01T00:00:10Z"), interval: .init(45, .second), timeZoneIdentifier: "UTC")
        let boundaries = try calendar.boundaries(
            from: UTC.at("2023-12-31T23:59:00Z"), to: UTC.at("2024-01-01T00:01:00Z"))
        #expect(boundaries.firstBucketNumber == -2)
        #expect(
            boundaries.starts == [
                UTC.at("2023-12-31T23:58:40Z"), UTC.at("2023-12-31T23:59:25Z"), UTC.at("2024-01-01T00:00:10Z"),
                UTC.at("2024-01-01T00:00:55Z"), UTC.at("2024-01-01T00:01:40Z"),
            ])
    }

    @Test func microsecondAnchorsKeepTheirFraction() throws {
        let anchor = UTC.at("2024-01-01T05:00:00Z") + 123_457
        let calendar = try BucketCalendar(
            anchor: anchor, interval: .init(1, .day), timeZoneIdentifier: "America/New_York")
        let bucket = try calendar.bucket(containing: UTC.at("2024-07-04T12:00:00Z"))
        #expect(bucket.start == UTC.at("2024-07-04T04:00:00Z") + 123_457)
        #expect(bucket.number == 185)
    }

    @Test func oneCalendarServesManyThreads() async throws {
        let calendar = try BucketCalendar(
            anchor: UTC.at("2024-01-01T05:00:00Z"), interval: .init(1, .day), timeZoneIdentifier: "America/New_York")
        let expected = try calendar.boundaries(from: UTC.at("2020-01-01T00:00:00Z"), to: UTC.at("2025-01-01T00:00:00Z"))
        let results = try await withThrowingTaskGroup(of: BucketBoundaries.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try calendar.boundaries(from: UTC.at("2020-01-01T00:00:00Z"), to: UTC.at("2025-01-01T00:00:00Z"))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        #expect(results.allSatisfy { $0 == expected })
        #expect(expected.count == 1828)
    }
}
