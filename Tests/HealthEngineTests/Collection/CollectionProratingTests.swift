import Foundation
import HealthModel
import Testing

@testable import HealthEngine

/// Pro-rating (HEALTHKIT.md §6), month-end anchors and the figures of discrete types per bucket.
@Suite struct CollectionProratingTests {
    static let hourly = CalendarInterval(1, .hour)

    @Test("100 steps over 13:57–14:02 give 60 to the 13:00 hour and 40 to the 14:00 hour")
    func thirteenFiftySeven() throws {
        let store = try store(
            type: "stepCount", rows: [Row(UTC.at("2024-06-01T13:57:00Z"), UTC.at("2024-06-01T14:02:00Z"), 100)])
        let buckets = try store.stepCollection(
            interval: Self.hourly, anchor: UTC.at("2024-01-01T00:00:00Z"), zone: "UTC")
        #expect(buckets.map(\.start) == [UTC.at("2024-06-01T13:00:00Z"), UTC.at("2024-06-01T14:00:00Z")])
        #expect(buckets.map(\.figures.sum) == [60, 40])
        // A predicate covering only the 13:00 hour chooses the sample; its value still reaches 14:00.
        let predicate = DatePredicate(start: UTC.at("2024-06-01T13:00:00Z"), end: UTC.at("2024-06-01T14:00:00Z"))
        let chosen = try store.stepCollection(
            interval: Self.hourly, anchor: 0, zone: "UTC", filter: SampleFilter(date: predicate))
        #expect(chosen.map(\.figures.sum) == [60, 40])
        // A plain statistics query counts it in full.
        let plain = try store.statistics(subject: "anna", type: "stepCount", options: .cumulativeSum)
        #expect(plain.figures.sum == 100)
    }

    @Test("a sample longer than several buckets spreads over each of them, the skipped ones included")
    func longSample() throws {
        // 300 steps over 3 h from 10:30 with 15-minute buckets: 25 per full bucket.
        let store = try store(
            type: "stepCount", rows: [Row(UTC.at("2024-06-01T10:30:00Z"), UTC.at("2024-06-01T13:30:00Z"), 300)])
        let buckets = try store.stepCollection(interval: .init(15, .minute), anchor: 0, zone: "Europe/Berlin")
        #expect(buckets.count == 12)
        #expect(buckets.allSatisfy { close($0.figures.sum, 25) })
        #expect(buckets.first?.start == UTC.at("2024-06-01T10:30:00Z"))
    }

    @Test("monthly buckets anchored on Jan 31 start Feb 29, then Mar 31, Apr 30, May 31")
    func monthEndAnchor() throws {
        // One glass of water (a point sample) every day at 12:00 UTC, 2024-01-31 through 2024-06-29.
        let first = UTC.at("2024-01-31T12:00:00Z")
        let rows = (0..<151).map { day in Row(first + Int64(day) * Micros.day, first + Int64(day) * Micros.day, 1) }
        let store = try store(type: "dietaryWater", rows: rows)
        let buckets = try store.stepCollection(
            interval: .init(1, .month), anchor: UTC.at("2024-01-31T05:00:00Z"), zone: "America/New_York",
            type: "dietaryWater")
        let starts = [
            "2024-01-31T05:00:00Z", "2024-02-29T05:00:00Z", "2024-03-31T04:00:00Z", "2024-04-30T04:00:00Z",
            "2024-05-31T04:00:00Z",
        ]
        #expect(buckets.map(\.start) == starts.map(UTC.at))
        #expect(buckets.last?.end == UTC.at("2024-06-30T04:00:00Z"))
        // Days per bucket: Jan 31–Feb 28 (29), Feb 29–Mar 30 (31), Mar 31–Apr 29 (30), Apr 30–May 30 (31),
        // May 31–Jun 29 (30).
        #expect(buckets.map(\.figures.sum) == [29, 31, 30, 31, 30])
    }

    @Test("a yearly anchor on Feb 29 comes back to Feb 28 in ordinary years")
    func leapDayAnchor() throws {
        let rows = [Row(UTC.at("2025-03-01T00:00:00Z"), UTC.at("2025-03-01T00:00:00Z"), 5)]
        let store = try store(type: "dietaryWater", rows: rows)
        let buckets = try store.stepCollection(
            interval: .init(1, .year), anchor: UTC.at("2024-02-29T00:00:00Z"), zone: "UTC", type: "dietaryWater")
        #expect(buckets.map(\.start) == [UTC.at("2025-02-28T00:00:00Z")])
        #expect(buckets.map(\.end) == [UTC.at("2026-02-28T00:00:00Z")])
    }

    @Test("discrete types: average by style, minimum, maximum, most recent and duration per bucket")
    func discreteFigures() throws {
        // Heart rate: points at 10:00:00, 10:00:30 (joined: trapezoid), 10:59:59; then 11:20 alone.
        let rows = [
            Row(UTC.at("2024-06-01T10:00:00Z"), UTC.at("2024-06-01T10:00:00Z"), 60),
            Row(UTC.at("2024-06-01T10:00:30Z"), UTC.at("2024-06-01T10:00:30Z"), 80),
            Row(UTC.at("2024-06-01T10:59:59Z"), UTC.at("2024-06-01T10:59:59Z"), 100),
            Row(UTC.at("2024-06-01T11:20:00Z"), UTC.at("2024-06-01T11:20:00Z"), 90, watch),
        ]
        let pulse = try store(type: "heartRate", rows: rows)
        let options: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax, .mostRecent, .duration]
        let buckets = try pulse.stepCollection(
            interval: Self.hourly, anchor: 0, zone: "UTC", options: options, type: "heartRate")
        #expect(buckets.count == 2)
        // Time-weighted: 22.5 s × 60 + 30 s × 70 + 22.5 s × 80 + 45 s × 100, over 22.5 + 30 + 22.5 + 45 = 120 s.
        let area: Double = 22.5 * 60 + 30 * 70 + 22.5 * 80 + 45 * 100
        let expected = area / 120
        #expect(close(buckets[0].figures.average, expected))
        #expect(buckets[0].figures.minimum == 60 && buckets[0].figures.maximum == 100)
        #expect(buckets[0].figures.mostRecent?.value == 100)
        #expect(buckets[0].figures.duration == 0)
        #expect(buckets[1].figures.average == 90 && buckets[1].figures.mostRecent?.value == 90)
        #expect(buckets.allSatisfy { $0.figures.sum == nil })

        // Arithmetic (body mass) and energy (sound) averages in one bucket each.
        let mass = try store(
            type: "bodyMass", rows: [Row(sec(10), sec(10), 70), Row(sec(20), sec(20), 72), Row(sec(30), sec(30), 77)])
        let massBuckets = try mass.stepCollection(
            interval: Self.hourly, anchor: 0, zone: "UTC", options: .discreteAverage, type: "bodyMass")
        #expect(massBuckets.map(\.figures.average) == [73])
        let sound = try store(
            type: "environmentalAudioExposure", rows: [Row(0, sec(60), 70), Row(sec(60), sec(180), 80)])
        let soundBuckets = try sound.stepCollection(
            interval: Self.hourly, anchor: 0, zone: "UTC", options: .discreteAverage,
            type: "environmentalAudioExposure")
        // 10·log10((60·10^7 + 120·10^8) / 180)
        #expect(close(soundBuckets.first?.figures.average, 10 * log10((60 * 1e7 + 120 * 1e8) / 180)))
    }

    @Test("bad zones, intervals and half-given enumerations are refused with their codes")
    func errors() throws {
        let store = try store(type: "stepCount", rows: [Row(0, sec(60), 10)])
        let zone = healthError { _ = try store.stepCollection(anchor: 0, zone: "Mars/Olympus_Mons") }
        #expect(zone?.code.rawValue == ErrorCode.invalidTimeZone.rawValue)
        let interval = healthError { _ = try store.stepCollection(interval: .init(0, .day), anchor: 0, zone: "UTC") }
        #expect(interval?.code.rawValue == ErrorCode.invalidInterval.rawValue)
        let tooMany = healthError {
            _ = try store.stepCollection(
                interval: .init(1, .second), anchor: 0, zone: "UTC", from: 0, to: 20 * Micros.day)
        }
        #expect(tooMany?.code.rawValue == ErrorCode.invalidInterval.rawValue)
        let half = healthError { _ = try store.stepCollection(anchor: 0, zone: "UTC", from: 0) }
        #expect(half?.code.rawValue == ErrorCode.invalidArgument.rawValue)
        let options = healthError { _ = try store.stepCollection(anchor: 0, zone: "UTC", options: .discreteMax) }
        #expect(options?.code.rawValue == ErrorCode.invalidOptions.rawValue)
        // No matching sample: no buckets (not an error), or every bucket empty when enumerating.
        #expect(
            try store.stepCollection(
                anchor: 0, zone: "UTC", filter: SampleFilter(date: DatePredicate(start: Micros.day))
            ).isEmpty)
        let empty = try HealthStore().stepCollection(anchor: 0, zone: "UTC", from: 0, to: 2 * Micros.day)
        #expect(empty.map(\.start) == [0, Micros.day, 2 * Micros.day] && empty.allSatisfy { $0.figures.sum == nil })
    }
}
