import Foundation
import HealthEngine
import HealthModel
import HealthWire
import TestSupport
import Testing

@testable import HealthServer

@Suite("subscription updates")
struct SubscriptionUpdaterTests {
    static let phone = SourceInfo(name: "iPhone", bundleIdentifier: "com.apple.health.phone")

    static func insert(_ store: HealthStore, _ start: Timestamp, minutes: Int64, value: Double) throws -> UUID {
        var batch = SampleBatch(
            batchID: uniqueBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        batch.append(start: start, end: start + minutes * Micros.minute, value: value, source: phone)
        _ = try store.insert(batch)
        return batch.uuid(row: 0)
    }

    @Test("hkd --deleted-retention and --subscriber-timeout")
    func flags() throws {
        guard
            case .run(let config) = try ServerConfiguration.parse([
                "--deleted-retention", "60", "--subscriber-timeout=5",
            ])
        else {
            Issue.record("not a run request")
            return
        }
        #expect(config.deletedRetentionSeconds == 60)
        #expect(config.subscriberTimeoutSeconds == 5)
        guard case .run(let defaults) = try ServerConfiguration.parse([]) else { return }
        #expect(defaults.deletedRetentionSeconds == 7 * 86_400)
    }

    @Test("an observer says only that something matching changed, and nothing when nothing did")
    func observer() throws {
        let store = HealthStore()
        let request = SubscriptionRequest.observer(
            subject: "anna", type: "stepCount", filter: SampleFilter(date: DatePredicate(start: 0)))
        let start = try SubscriptionUpdater.start(request, store: store)
        #expect(start.updates.isEmpty)
        #expect(try SubscriptionUpdater.next(request, after: start.anchor, store: store).updates.isEmpty)
        _ = try Self.insert(store, -Micros.day, minutes: 5, value: 1)
        let outside = try SubscriptionUpdater.next(request, after: start.anchor, store: store)
        #expect(outside.updates.isEmpty, "a sample before the predicate's start does not match")
        _ = try Self.insert(store, Micros.day, minutes: 5, value: 1)
        let inside = try SubscriptionUpdater.next(request, after: outside.anchor, store: store)
        #expect(inside.updates == [.changed(anchor: store.lastAnchor(type: "stepCount"))])
    }

    @Test("an anchored subscription sends the backlog in bounded updates, then each new change")
    func anchored() throws {
        let store = HealthStore()
        var batch = SampleBatch(batchID: uniqueBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for i in 0..<Int64(5000) {
            batch.append(start: i * Micros.minute, end: i * Micros.minute + 1, value: 1, source: Self.phone)
        }
        _ = try store.insert(batch)
        let request = SubscriptionRequest.anchored(ChangesQuery(subject: "anna", type: "stepCount"))
        var step = try SubscriptionUpdater.start(request, store: store)
        var received = 0
        while true {
            for case .changes(let changes) in step.updates {
                #expect(changes.added.count <= SubscriptionUpdater.maxChangesPerUpdate)
                received += changes.added.count
            }
            guard step.more else { break }
            step = try SubscriptionUpdater.next(request, after: step.anchor, store: store)
        }
        #expect(received == 5000)
        let uuid = try Self.insert(store, 0, minutes: 1, value: 2)
        let next = try SubscriptionUpdater.next(request, after: step.anchor, store: store)
        guard case .changes(let changes)? = next.updates.first else {
            Issue.record("no update for a new sample")
            return
        }
        #expect(changes.added.uuids == [uuid])
    }

    @Test("a live collection pushes only the touched buckets, and an emptied bucket without figures")
    func collection() throws {
        let store = HealthStore()
        let day: Timestamp = 1_709_960_400_000_000  // 2024-03-09 00:00 in New York
        _ = try Self.insert(store, day + Micros.hour, minutes: 60, value: 10)
        let later = try Self.insert(store, day + 5 * Micros.day, minutes: 60, value: 20)
        let query = CollectionQuery(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: day,
            interval: CalendarInterval(1, .day), timeZone: "America/New_York")
        let request = SubscriptionRequest.collection(query)
        let start = try SubscriptionUpdater.start(request, store: store)
        guard case .buckets(let initial)? = start.updates.first else {
            Issue.record("no initial buckets")
            return
        }
        #expect(initial.buckets.map(\.figures.sum) == [10, 20])
        // 23:30 on the first day for two hours: pro-rated over two days (the second is 23 hours long).
        _ = try Self.insert(store, day + 23 * Micros.hour + 30 * Micros.minute, minutes: 120, value: 40)
        let step = try SubscriptionUpdater.next(request, after: start.anchor, store: store)
        guard case .buckets(let touched)? = step.updates.first else {
            Issue.record("no update")
            return
        }
        #expect(touched.buckets.map(\.start) == [day, day + Micros.day])
        #expect(touched.buckets.map(\.figures.sum) == [20, 30])
        _ = try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [later]))
        let emptied = try SubscriptionUpdater.next(request, after: step.anchor, store: store)
        guard case .buckets(let gone)? = emptied.updates.first else {
            Issue.record("no update for the deletion")
            return
        }
        #expect(gone.buckets.count == 1)
        #expect(gone.buckets.first?.figures.sum == nil)
    }
}
