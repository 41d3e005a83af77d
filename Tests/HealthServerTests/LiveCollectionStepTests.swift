import Foundation
@testable import HealthEngine
import HealthModel
import HealthWire
import TestSupport
import Testing

@testable import HealthServer

/// The pieces that make live collections cheap: kept bucket boundaries, bucket runs and shared steps.
@Suite("live collection steps")
struct LiveCollectionStepTests {
    static let phone = SourceInfo(name: "iPhone", bundleIdentifier: "com.apple.health.phone")
    /// 2024-01-01T00:00 in Berlin (UTC+1).
    static let berlin2024: Timestamp = 1_704_063_600_000_000

    static func insert(_ store: HealthStore, _ starts: [Timestamp], minutes: Int64, value: Double) throws {
        var batch = SampleBatch(
            batchID: uniqueBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for start in starts {
            batch.append(start: start, end: start + minutes * Micros.minute, value: value, source: phone)
        }
        _ = try store.insert(batch)
    }

    @Test("the boundary cache answers what the calendar computes, across both DST changes, growing both ways")
    func boundaryCacheMatchesCalendar() throws {
        let seed = TestSeed.value(27)
        var generator = SplitMix64(seed: seed)
        for (interval, zone) in [
            (CalendarInterval(1, .day), "Europe/Berlin"), (CalendarInterval(1, .hour), "Europe/Berlin"),
            (CalendarInterval(1, .month), "Europe/Berlin"), (CalendarInterval(1, .day), "Pacific/Apia"),
        ] {
            // Anchored at 02:30 on the spring-forward day: a wall time that does not exist that day.
            let anchor = Self.berlin2024 + 89 * Micros.day + 150 * Micros.minute
            let calendar = try BucketCalendar(anchor: anchor, interval: interval, timeZoneIdentifier: zone)
            let cache = BucketBoundaryCache()
            // 2011 (Apia skipped 2011-12-30) through 2025, in random order so the window grows forwards and back.
            for _ in 0..<200 {
                let from = Int64.random(in: 1_293_840_000_000_000...1_735_689_600_000_000, using: &generator)
                let to = from + Int64.random(in: 0...(40 * Micros.day), using: &generator)
                let cached = try cache.boundaries(of: calendar, from: from, to: to)
                let fresh = try calendar.boundaries(from: from, to: to)
                #expect(cached == fresh, "\(interval) in \(zone) from \(from) to \(to), seed \(seed)")
            }
            // Around each Berlin change of 2024 (March 31, October 27): 23- and 25-hour days.
            for change in [Self.berlin2024 + 90 * Micros.day, Self.berlin2024 + 300 * Micros.day] {
                let cached = try cache.boundaries(of: calendar, from: change - Micros.day, to: change + Micros.day)
                #expect(cached == (try calendar.boundaries(from: change - Micros.day, to: change + Micros.day)))
            }
        }
    }

    @Test("the boundary cache follows a change of calendar, refuses what the calendar refuses, and serves wide ranges")
    func boundaryCacheEdges() throws {
        let cache = BucketBoundaryCache()
        let days = try BucketCalendar(
            anchor: Self.berlin2024, interval: CalendarInterval(1, .day), timeZoneIdentifier: "Europe/Berlin")
        let tokyo = try BucketCalendar(
            anchor: Self.berlin2024, interval: CalendarInterval(1, .day), timeZoneIdentifier: "Asia/Tokyo")
        let from = Self.berlin2024 + 100 * Micros.day
        _ = try cache.boundaries(of: days, from: from, to: from + Micros.day)
        #expect(
            try cache.boundaries(of: tokyo, from: from, to: from + Micros.day)
                == (try tokyo.boundaries(from: from, to: from + Micros.day)))
        #expect(throws: HealthError.self) { try cache.boundaries(of: days, from: from, to: from - 1) }
        let tooMany = #expect(throws: HealthError.self) {
            try cache.boundaries(of: days, from: from, to: from + 10 * Micros.day, maximumBucketCount: 5)
        }
        #expect(tooMany?.code == .invalidInterval)
        // A year of minutes is wider than the window: computed afresh, still equal.
        let minutes = try BucketCalendar(
            anchor: Self.berlin2024, interval: CalendarInterval(1, .minute), timeZoneIdentifier: "Europe/Berlin")
        let year = try cache.boundaries(of: minutes, from: from, to: from + 365 * Micros.day)
        #expect(year.count > BucketBoundaryCache.windowLimit)
        #expect(year == (try minutes.boundaries(from: from, to: from + 365 * Micros.day)))
    }

    @Test("buckets touched by many small spans equal those of a fresh collection, spans joined into runs")
    func touchedBucketsMatchFreshCollection() throws {
        let store = HealthStore()
        // One sample a minute for five days of UTC from March 28 (CET) over the spring-forward change, 30 s each:
        // 7,200 separate spans on six local days (the last hour falls on April 2, CEST).
        let first = Self.berlin2024 + 87 * Micros.day
        let starts = (0..<Int64(7200)).map { first + $0 * Micros.minute }
        try Self.insert(store, starts, minutes: 1, value: 2)
        // Ten days later a sample straddling local midnight (23:30 to 01:00 CEST).
        try Self.insert(store, [first + 15 * Micros.day - 90 * Micros.minute], minutes: 90, value: 90)
        let spans =
            starts.map { $0...($0 + 30 * Micros.second) } + [
                (first + 15 * Micros.day - 90 * Micros.minute)...(first + 15 * Micros.day)
            ]
        let interval = CalendarInterval(1, .day)
        let seed = TestSeed.value(94)
        var order = SplitMix64(seed: seed)
        let touched = try store.collectionBuckets(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: Self.berlin2024, interval: interval,
            timeZone: "Europe/Berlin", touching: spans.shuffled(using: &order))
        let fresh = try store.collection(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: Self.berlin2024, interval: interval,
            timeZone: "Europe/Berlin", enumerateFrom: first - Micros.day, enumerateTo: first + 20 * Micros.day)
        let expected = fresh.filter { bucket in
            spans.contains { $0.lowerBound < bucket.end && $0.upperBound >= bucket.start }
        }
        #expect(touched.map(\.start) == expected.map(\.start), "seed \(seed)")
        #expect(touched.count == 8, "six days and two more, not one per span; seed \(seed)")
        for (a, b) in zip(touched, expected) {
            #expect(abs((a.figures.sum ?? -1) - (b.figures.sum ?? -2)) <= 1e-9 * max(1, abs(b.figures.sum ?? 0)))
        }
        let calendar = try BucketCalendar(
            anchor: Self.berlin2024, interval: interval, timeZoneIdentifier: "Europe/Berlin")
        let runs = try HealthStore.bucketRuns(of: spans, calendar: calendar, cache: BucketBoundaryCache())
        #expect(runs.map(\.count) == [6, 2], "adjacent days form one run")
    }

    /// Applies collection updates as a client would: later buckets replace earlier ones with the same start.
    static func apply(_ updates: [UpdateContent], to table: inout [Timestamp: Statistics]) {
        for case .buckets(let result) in updates {
            for bucket in result.buckets { table[bucket.start] = bucket }
        }
    }

    static func current(_ store: HealthStore, _ query: CollectionQuery) throws -> [Timestamp: Statistics] {
        let buckets = try store.collection(
            subject: query.subject, type: QuantityType.named(query.type), options: query.options, anchor: query.anchor,
            interval: query.interval, timeZone: query.timeZone)
        return Dictionary(uniqueKeysWithValues: buckets.map { ($0.start, $0) })
    }

    @Test("subscribers of one query share steps, stay in step, and end on the current buckets")
    func sharedStepsStayCorrect() throws {
        let store = HealthStore()
        let day = Self.berlin2024
        try Self.insert(store, [day + Micros.hour], minutes: 60, value: 10)
        let query = CollectionQuery(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: day,
            interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin")
        let request = SubscriptionRequest.collection(query)
        let cache = CollectionStepCache()
        let start = try SubscriptionUpdater.start(request, store: store)
        var tables = [[Timestamp: Statistics]](repeating: [:], count: 2)
        for index in tables.indices { Self.apply(start.updates, to: &tables[index]) }
        var anchors = [start.anchor, start.anchor]

        // A step that found nothing is not shared: the change after it reaches the other subscriber.
        let idle = try SubscriptionUpdater.next(request, after: anchors[1], store: store, cache: cache)
        #expect(idle.updates.isEmpty && idle.anchor == anchors[1])
        try Self.insert(store, [day + 30 * Micros.day], minutes: 30, value: 7)
        let afterIdle = try SubscriptionUpdater.next(request, after: anchors[1], store: store, cache: cache)
        guard case .buckets(let late)? = afterIdle.updates.first else {
            Issue.record("an empty step hid a later change")
            return
        }
        #expect(late.buckets.map(\.figures.sum) == [7])
        // The leader, still at the first anchor, takes that step; nothing newer, so no further step is asked for.
        let caughtUp = try SubscriptionUpdater.next(request, after: anchors[0], store: store, cache: cache)
        #expect(caughtUp.updates == afterIdle.updates && caughtUp.anchor == afterIdle.anchor && !caughtUp.more)
        for index in tables.indices {
            Self.apply(afterIdle.updates, to: &tables[index])
            anchors[index] = afterIdle.anchor
        }

        // Several changes before either subscriber computes: one step covers them all (coalesced).
        for k in 1...5 { try Self.insert(store, [day + Int64(k) * Micros.day], minutes: 30, value: Double(k)) }
        let leader = try SubscriptionUpdater.next(request, after: anchors[0], store: store, cache: cache)
        #expect(!leader.more)
        guard case .buckets(let touched)? = leader.updates.first else {
            Issue.record("no update for five changes")
            return
        }
        #expect(touched.buckets.map(\.start) == (1...5).map { day + Int64($0) * Micros.day })
        Self.apply(leader.updates, to: &tables[0])
        anchors[0] = leader.anchor

        // A change after the leader's step: the follower takes the shared step, learns there is more, catches up.
        try Self.insert(store, [day + 2 * Micros.day + Micros.hour], minutes: 30, value: 100)
        let shared = try SubscriptionUpdater.next(request, after: anchors[1], store: store, cache: cache)
        #expect(shared.updates == leader.updates && shared.anchor == leader.anchor)
        #expect(shared.more, "the change after the shared step must not be lost")
        Self.apply(shared.updates, to: &tables[1])
        anchors[1] = shared.anchor
        for index in tables.indices {
            let step = try SubscriptionUpdater.next(request, after: anchors[index], store: store, cache: cache)
            Self.apply(step.updates, to: &tables[index])
            anchors[index] = step.anchor
        }
        #expect(anchors[0] == anchors[1], "both reach the same anchor")
        let current = try Self.current(store, query)
        for table in tables {
            #expect(table.filter { $0.value.figures.sum != nil } == current)
        }
        #expect(tables[0][day + 2 * Micros.day]?.figures.sum == 102)
    }
}
