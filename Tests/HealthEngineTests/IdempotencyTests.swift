import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Retries add nothing: batch ids, UUIDs with their content, sync identifiers and versions (HEALTHKIT.md §3).
struct IdempotencyTests {
    static func synced(_ id: String, version: Int, start: Timestamp, value: Double, uuid: UUID = UUID()) -> SampleBatch
    {
        var batch = SampleBatch(
            batchID: uniqueBatchID(), subject: "anna", typeIdentifier: "bodyMass", unit: "kg")
        batch.append(
            start: start, end: start, value: value, source: fitApp, uuid: uuid,
            metadata: [MetadataKey.syncIdentifier: .string(id), MetadataKey.syncVersion: .number(Double(version))])
        return batch
    }

    @Test("a batch re-sent with the same id adds nothing and reports its first result again")
    func resentBatch() throws {
        let store = HealthStore()
        let batch = makeBatch(type: "stepCount", rows: [Row(0, 10, 5), Row(10, 20, 6)])
        #expect(try store.insert(batch) == InsertResult(inserted: 2, duplicates: 0))
        #expect(try store.insert(batch) == InsertResult(inserted: 2, duplicates: 0))
        #expect(try store.samples(subject: "anna", type: "stepCount").count == 2)
    }

    @Test("the same UUIDs in a new batch are duplicates when the content matches")
    func sameUUIDSameContent() throws {
        let store = HealthStore()
        var first = makeBatch(type: "stepCount", rows: [Row(0, 10, 5), Row(10, 20, 6)])
        first.uuids = [UUID(), UUID()]
        _ = try store.insert(first)
        var again = first
        again.batchID += 1_000_000
        again.append(start: 30, end: 40, value: 7, source: phone, uuid: UUID())
        #expect(try store.insert(again) == InsertResult(inserted: 1, duplicates: 2))
        #expect(try store.samples(subject: "anna", type: "stepCount").count == 3)
    }

    @Test("derived UUIDs sent back in a new batch are found through the batch table: duplicates, conflicts, deletes")
    func derivedUUIDsSentBack() throws {
        let store = HealthStore()
        let first = makeBatch(type: "stepCount", rows: [Row(0, 10, 5), Row(10, 20, 6), Row(20, 30, 7)])
        _ = try store.insert(first, writer: 4, beforeApplying: {})
        let stored = try store.samples(subject: "anna", type: "stepCount")
        #expect(stored.uuids == (0..<3).map { SampleBatch.derivedUUID(batchID: first.batchID, row: $0) })
        // The same content under the derived UUIDs, in a batch with another id: nothing new.
        var echo = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for row in 0..<3 {
            echo.append(
                start: stored.starts[row], end: stored.ends[row], value: stored.values[row], source: phone,
                uuid: stored.uuids[row])
        }
        echo.append(start: 40, end: 50, value: 8, source: phone, uuid: UUID())
        #expect(try store.insert(echo) == InsertResult(inserted: 1, duplicates: 3))
        // Other content under a derived UUID is a conflict, even at another start.
        var moved = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        moved.append(start: 500, end: 510, value: 6, source: phone, uuid: stored.uuids[1])
        #expect { try store.insert(moved) } throws: { ($0 as? HealthError)?.code == .uuidConflict }
        // Deleting by a derived UUID removes that row only; the writer of the rest is still known.
        #expect(
            try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [stored.uuids[1]])) == 1)
        #expect(
            try store.samples(subject: "anna", type: "stepCount", filter: SampleFilter(writer: 4)).values == [5, 7])
        // Once deleted, the UUID may be inserted again.
        #expect(try store.insert(moved).inserted == 1)
    }

    @Test("a batch id applied again (after a deleted row, beyond the recent ids) keeps every derived UUID findable")
    func batchIDAppliedTwice() throws {
        let store = HealthStore()
        let original = makeBatch(
            type: "stepCount", rows: (0..<6).map { Row(sec(Double($0) * 60), sec(Double($0) * 60 + 60), 5) })
        _ = try store.insert(original)
        let uuids = (0..<6).map(original.uuid(row:))
        #expect(try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [uuids[2]])) == 1)
        // Push the batch id out of the recent ones, then send the batch again: only the deleted row comes back.
        for _ in 0...SeriesLedger.recentBatchLimit {
            _ = try store.insert(
                makeBatch(type: "stepCount", rows: (0..<4).map { _ in Row(sec(9e6), sec(9e6 + 1), 1) }))
        }
        #expect(try store.insert(original) == InsertResult(inserted: 1, duplicates: 5))
        // Every UUID of the batch, from either application, is still recognised and deletable.
        var echo = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for row in 0..<6 {
            echo.append(start: original.starts[row], end: original.ends[row], value: 5, source: phone, uuid: uuids[row])
        }
        #expect(try store.insert(echo) == InsertResult(inserted: 0, duplicates: 6))
        // Found by its UUID alone (at another start): a conflict, not a second copy.
        var moved = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        moved.append(start: sec(5000), end: sec(5060), value: 5, source: phone, uuid: uuids[0])
        #expect { try store.insert(moved) } throws: { ($0 as? HealthError)?.code == .uuidConflict }
        #expect(try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: Set(uuids))) == 6)
    }

    @Test("a new batch's derived UUIDs are still checked against UUIDs another batch sent explicitly")
    func derivedUUIDSentEarlier() throws {
        let store = HealthStore()
        let id = freshBatchID()
        var early = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        early.append(start: 0, end: 10, value: 5, source: phone, uuid: SampleBatch.derivedUUID(batchID: id, row: 0))
        _ = try store.insert(early)
        var later = SampleBatch(batchID: id, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for i in 0..<5 { later.append(start: Timestamp(i) * 10, end: Timestamp(i) * 10 + 10, value: 5, source: phone) }
        #expect(try store.insert(later) == InsertResult(inserted: 4, duplicates: 1))
    }

    @Test("a batch takes one anchor per row, duplicates included; changes report only what was added")
    func anchorsPerBatchRow() throws {
        let store = HealthStore()
        var first = makeBatch(type: "stepCount", rows: [Row(0, 10, 5)])
        first.uuids = [UUID()]
        _ = try store.insert(first)
        var second = makeBatch(type: "stepCount", rows: [Row(0, 10, 5), Row(10, 20, 6), Row(20, 30, 7)])
        second.uuids = [first.uuids![0], UUID(), UUID()]
        #expect(try store.insert(second) == InsertResult(inserted: 2, duplicates: 1))
        #expect(store.lastAnchor(type: "stepCount") == 4)
        let changes = try store.changes(subject: "anna", type: "stepCount", anchor: 1)
        #expect(changes.added.uuids == Array(second.uuids![1...]))
        #expect(changes.anchor == 4)
    }

    @Test("the same UUID with different content is a conflict and the whole batch is refused")
    func uuidConflict() throws {
        let store = HealthStore()
        var first = makeBatch(type: "stepCount", rows: [Row(0, 10, 5)])
        first.uuids = [UUID()]
        _ = try store.insert(first)
        var changed = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        changed.append(start: 100, end: 110, value: 1, source: phone, uuid: UUID())
        changed.append(start: 0, end: 10, value: 9, source: phone, uuid: first.uuids![0])
        #expect { try store.insert(changed) } throws: { ($0 as? HealthError)?.code == .uuidConflict }
        #expect(try store.samples(subject: "anna", type: "stepCount").count == 1)
        var inBatch = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        let twice = UUID()
        inBatch.append(start: 200, end: 210, value: 1, source: phone, uuid: twice)
        inBatch.append(start: 300, end: 310, value: 1, source: phone, uuid: twice)
        #expect { try store.insert(inBatch) } throws: { ($0 as? HealthError)?.code == .uuidConflict }
    }

    @Test(
        "a batch of rounded values matches a stored sample of the same source and interval within the rounding only"
    )
    func roundedValuesMatchStoredSamples() throws {
        let store = HealthStore()
        // Stored from miles printed with 6 digits: 0.767123 mi.
        let stored = 0.767123 * 1609.344
        _ = try store.insert(makeBatch(type: "distanceWalkingRunning", rows: [Row(0, sec(60), stored)]))
        // The same walk printed in kilometres (1.23456 km) is that sample; with other digits, another source, or
        // another interval it is not; and without valueDigits the values are exact, so it is new too.
        func sent(_ rows: [Row], digits: Int?) throws -> InsertResult {
            var batch = makeBatch(type: "distanceWalkingRunning", unit: "km", rows: rows)
            batch.uuids = rows.map { _ in UUID() }
            batch.valueDigits = digits
            return try store.insert(batch)
        }
        let kilometres = 1.23456
        #expect(try sent([Row(0, sec(60), kilometres)], digits: 6).duplicates == 1)
        #expect(try sent([Row(0, sec(60), 1.23466)], digits: 6).inserted == 1, "one part in 10^4 apart")
        #expect(try sent([Row(0, sec(60), kilometres, watch)], digits: 6).inserted == 1)
        #expect(try sent([Row(0, sec(61), kilometres)], digits: 6).inserted == 1)
        #expect(try sent([Row(0, sec(60), 1.2346)], digits: 9).inserted == 1, "9 digits are exact enough to differ")
        #expect(try sent([Row(sec(1), sec(60), kilometres)], digits: nil).inserted == 1)
        #expect(try store.samples(subject: "anna", type: "distanceWalkingRunning").count == 6)
    }

    @Test("a higher sync version replaces the sample holding the identifier; equal or lower is ignored")
    func syncVersions() throws {
        let store = HealthStore()
        let v1 = UUID()
        #expect(try store.insert(Self.synced("w-1", version: 1, start: 1000, value: 70, uuid: v1)).inserted == 1)
        let v3 = UUID()
        #expect(try store.insert(Self.synced("w-1", version: 3, start: 2000, value: 71, uuid: v3)).inserted == 1)
        #expect(
            try store.insert(Self.synced("w-1", version: 2, start: 3000, value: 72))
                == InsertResult(inserted: 0, duplicates: 1))
        #expect(
            try store.insert(Self.synced("w-1", version: 3, start: 4000, value: 73))
                == InsertResult(inserted: 0, duplicates: 1))
        let stored = try store.samples(subject: "anna", type: "bodyMass")
        #expect(stored.uuids == [v3])
        #expect(stored.values == [71])
        // Another identifier and another source's identifier are independent.
        _ = try store.insert(Self.synced("w-2", version: 1, start: 5000, value: 60))
        #expect(try store.samples(subject: "anna", type: "bodyMass").count == 2)
        // Within one batch, the highest version wins.
        var batch = Self.synced("w-3", version: 1, start: 6000, value: 50)
        batch.append(
            start: 7000, end: 7000, value: 51, source: fitApp, uuid: UUID(),
            metadata: [MetadataKey.syncIdentifier: .string("w-3"), MetadataKey.syncVersion: .number(2)])
        #expect(try store.insert(batch) == InsertResult(inserted: 1, duplicates: 1))
        #expect(try store.samples(subject: "anna", type: "bodyMass").values == [71, 60, 51])
    }

    @Test("a sync identifier without a whole-number version is an invalid sample")
    func syncWithoutVersion() throws {
        var batch = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "bodyMass", unit: "kg")
        batch.append(start: 0, end: 0, value: 70, source: fitApp, metadata: [MetadataKey.syncIdentifier: .string("x")])
        #expect { try HealthStore().insert(batch) } throws: { ($0 as? HealthError)?.code == .invalidSample }
    }

    @Test("the change hook runs only for changes, and a throwing hook leaves the store unchanged")
    func changeHook() throws {
        let store = HealthStore()
        let batch = makeBatch(type: "stepCount", rows: [Row(0, 10, 5)])
        #expect(throws: HealthError.self) {
            try store.insert(batch, beforeApplying: { throw HealthError(.storageUnavailable, "disk full") })
        }
        #expect(try store.samples(subject: "anna", type: "stepCount").count == 0)
        var calls = 0
        _ = try store.insert(batch, beforeApplying: { calls += 1 })
        _ = try store.insert(batch, beforeApplying: { calls += 1 })
        #expect(calls == 1)
        #expect(
            try store.delete(
                subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [UUID()]),
                beforeApplying: { calls += 1 }) == 0)
        #expect(calls == 1)
    }

    @Test("delete by UUID and by predicate removes exactly the matching samples; deleted UUIDs can come back")
    func delete() throws {
        let store = HealthStore()
        var batch = makeBatch(
            type: "stepCount",
            rows: (0..<10).map { Row(sec(Double($0) * 60), sec(Double($0) * 60 + 60), 1, $0 < 5 ? phone : watch) })
        batch.uuids = (0..<10).map { _ in UUID() }
        _ = try store.insert(batch)
        #expect(
            try store.delete(
                subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [batch.uuids![0], UUID()])) == 1)
        let range = SampleFilter(
            date: DatePredicate(start: sec(120), end: sec(300), strictStartDate: true), sources: [phone.name])
        #expect(try store.delete(subject: "anna", type: "stepCount", filter: range) == 3)
        #expect(
            try store.delete(
                subject: "anna", type: "stepCount", filter: SampleFilter(sources: [watch.bundleIdentifier])) == 5)
        let left = try store.samples(subject: "anna", type: "stepCount")
        #expect(left.uuids == [batch.uuids![1]])
        var again = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        again.append(start: 0, end: sec(60), value: 3, source: phone, uuid: batch.uuids![0])
        #expect(try store.insert(again).inserted == 1)
    }

    @Test("a shard image restores to an identical store, retry bookkeeping included")
    func imageRoundTrip() throws {
        let store = HealthStore()
        let batch = makeBatch(type: "stepCount", rows: [Row(10, 20, 5, watch, userEntered: true), Row(0, 10, 6)])
        _ = try store.insert(batch)
        _ = try store.insert(Self.synced("w-1", version: 4, start: 1000, value: 70))
        try store.setSourcePriority(subject: "anna", type: "stepCount", order: [phone, watch])
        let restored = HealthStore()
        for type in try [QuantityType.named("stepCount"), QuantityType.named("bodyMass")] {
            let (image, mark) = store.image(of: type) { 42 }
            #expect(mark == 42)
            try restored.restore(image)
            #expect(restored.image(of: type) { 0 }.0 == image)
        }
        #expect(try restored.insert(batch) == InsertResult(inserted: 2, duplicates: 0))
        #expect(try restored.insert(Self.synced("w-1", version: 4, start: 9, value: 1)).duplicates == 1)
        #expect(try restored.sourcePriority(subject: "anna", type: "stepCount") == [phone, watch])
        #expect(
            try restored.samples(subject: "anna", type: "stepCount")
                == store.samples(subject: "anna", type: "stepCount"))
    }

    @Test("an image that breaks an invariant is refused")
    func brokenImage() throws {
        let store = HealthStore()
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(0, 10, 5), Row(10, 20, 6)]))
        var (image, _) = store.image(of: try QuantityType.named("stepCount")) { 0 }
        var starts = image.series[0].starts
        starts.swapAt(0, 1)
        image.series[0] = image.series[0].replacingRows(starts: starts)
        #expect { try HealthStore().restore(image) } throws: {
            ($0 as? HealthError)?.code.rawValue == ErrorCode.internalError.rawValue
        }
    }
}
