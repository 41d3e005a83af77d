import HealthModel
import Testing

@testable import HealthEngine

/// Invalid zones, intervals and ranges get a ``HealthError`` with a stable code and a message naming the culprit.
@Suite struct BucketCalendarErrorTests {
    @Test func unknownTimeZone() {
        #expect(throws: HealthError(.invalidTimeZone, "unknown time zone \"Mars/Base\"")) {
            try BucketCalendar(anchor: 0, interval: .init(1, .day), timeZoneIdentifier: "Mars/Base")
        }
    }

    @Test(arguments: [0, -1, CalendarInterval.maxCount + 1])
    func intervalCountOutOfBounds(count: Int) {
        #expect {
            try BucketCalendar(anchor: 0, interval: .init(count, .hour), timeZoneIdentifier: "UTC")
        } throws: { ($0 as? HealthError)?.code == .invalidInterval }
    }

    @Test func tooManyBucketsIsRefusedBeforeAllocating() throws {
        // One-second buckets over a year: 31,622,401 buckets, above the default cap of 10 million.
        let calendar = try BucketCalendar(anchor: 0, interval: .init(1, .second), timeZoneIdentifier: "UTC")
        #expect {
            try calendar.boundaries(from: UTC.at("2024-01-01T00:00:00Z"), to: UTC.at("2025-01-01T00:00:00Z"))
        } throws: { error in
            guard let error = error as? HealthError else { return false }
            return error.code == .invalidInterval && error.message.hasPrefix("31622401 buckets of 1s")
                && error.message.contains("limit of 10000000")
        }
        // A caller-chosen cap applies the same way; exactly at the cap is allowed.
        let daily = try BucketCalendar(anchor: 0, interval: .init(1, .day), timeZoneIdentifier: "UTC")
        #expect(try daily.boundaries(from: 0, to: 9 * Micros.day, maximumBucketCount: 10).count == 10)
        #expect {
            try daily.boundaries(from: 0, to: 10 * Micros.day, maximumBucketCount: 10)
        } throws: { ($0 as? HealthError)?.code == .invalidInterval }
    }

    @Test func reversedRange() throws {
        let calendar = try BucketCalendar(anchor: 0, interval: .init(1, .day), timeZoneIdentifier: "UTC")
        #expect(throws: HealthError(.invalidArgument, "range start 2 is after range end 1")) {
            try calendar.boundaries(from: 2, to: 1)
        }
    }

    @Test func instantsOutsideYears1Through9999() throws {
        #expect {
            try BucketCalendar(anchor: .max, interval: .init(1, .day), timeZoneIdentifier: "UTC")
        } throws: { ($0 as? HealthError)?.code == .invalidArgument }
        let calendar = try BucketCalendar(anchor: 0, interval: .init(1, .year), timeZoneIdentifier: "UTC")
        #expect {
            try calendar.boundaries(from: .min, to: 0)
        } throws: { ($0 as? HealthError)?.code == .invalidArgument }
        // The extremes themselves are fine, even with the longest interval.
        let longest = try BucketCalendar(
            anchor: 0, interval: .init(CalendarInterval.maxCount, .year), timeZoneIdentifier: "America/New_York")
        let all = try longest.boundaries(
            from: SupportedInstants.range.lowerBound, to: SupportedInstants.range.upperBound)
        #expect(all.count == 2)
        #expect(all.firstBucketNumber == -1)
    }
}
