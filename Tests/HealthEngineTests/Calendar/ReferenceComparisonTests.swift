import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// ``BucketCalendar`` against ``ReferenceBucketCalendar`` (Foundation, one call per bucket) on random zones,
/// intervals, anchors (many right next to a DST transition) and ranges.
@Suite struct ReferenceComparisonTests {
    static let zones = [
        "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe",
        "Antarctica/Troll", "America/Sao_Paulo", "Europe/London", "Pacific/Chatham", "America/St_Johns",
        "Africa/Casablanca", "Asia/Tehran", "UTC", "Europe/Moscow", "America/Santiago", "Australia/Sydney",
        "America/Los_Angeles", "America/Havana", "Europe/Dublin",
    ]

    static let intervals: [CalendarInterval] = [
        .init(1, .second), .init(45, .second), .init(1, .minute), .init(15, .minute), .init(1, .hour),
        .init(5, .hour), .init(1, .day), .init(2, .day), .init(3, .day), .init(1, .week), .init(2, .week),
        .init(1, .month), .init(2, .month), .init(3, .month), .init(1, .year), .init(2, .year),
    ]

    /// Seeds, one test case each, so a failure names the seed that reproduces it.
    @Test(arguments: 0..<64)
    func boundariesMatchFoundation(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed) &* 7919 &+ 17)
        for _ in 0..<12 {
            let zone = Self.zones.randomElement(using: &random)!
            let interval = Self.intervals.randomElement(using: &random)!
            let anchor = Self.randomAnchor(zone: zone, using: &random)
            let calendar = try BucketCalendar(anchor: anchor, interval: interval, timeZoneIdentifier: zone)
            let reference = ReferenceBucketCalendar(anchor: anchor, interval: interval, timeZoneIdentifier: zone)

            // A range starting up to 40 buckets (nominal length) away from the anchor, before or after it,
            // sometimes on a transition, lasting 0...120 nominal buckets.
            let nominal = interval.nominalLength
            let from: Timestamp =
                Bool.random(using: &random)
                ? anchor + Int64.random(in: -40 * nominal...40 * nominal, using: &random)
                : Self.nearTransition(
                    zone: zone, around: anchor + Int64.random(in: -40 * nominal...40 * nominal, using: &random),
                    using: &random)
            let to = from + Int64.random(in: 0...120 * nominal, using: &random)

            let fast = try calendar.boundaries(from: from, to: to)
            let slow = reference.boundaries(from: from, to: to)
            let context = "\(zone) \(interval) anchor \(anchor) range \(from)...\(to)"
            #expect(fast.firstBucketNumber == slow.firstBucketNumber, "\(context)")
            #expect(fast.starts == slow.starts, "\(context)")
            for _ in 0..<20 {
                let instant = Int64.random(in: fast.span, using: &random)
                let position = try #require(fast.bucketIndex(of: instant))
                #expect(
                    fast.firstBucketNumber + position == reference.bucketNumber(containing: instant),
                    "\(context) at \(instant)")
            }
        }
    }

    /// A whole-second anchor between 1975 and 2035, half the time within a day of a transition of `zone`.
    static func randomAnchor(zone: String, using random: inout SplitMix64) -> Timestamp {
        let seconds = Int64.random(in: 157_766_400...2_082_758_400, using: &random)
        let instant = seconds * Micros.second
        return Bool.random(using: &random) ? nearTransition(zone: zone, around: instant, using: &random) : instant
    }

    /// A whole-second instant at most a day before or after the first transition of `zone` after `instant`
    /// (`instant` itself when the zone has none).
    static func nearTransition(zone: String, around instant: Timestamp, using random: inout SplitMix64)
        -> Timestamp
    {
        let date = ReferenceBucketCalendar.date(instant)
        guard let transition = TimeZone(identifier: zone)!.nextDaylightSavingTimeTransition(after: date) else {
            return instant
        }
        let quarterHours = Int64.random(in: -96...96, using: &random)
        return ReferenceBucketCalendar.timestamp(transition) + quarterHours * 15 * Micros.minute
            + Int64.random(in: 0...1, using: &random) * 30 * Micros.minute
    }
}
