import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Reads every change after `anchor` in pages of `limit`; returns added UUIDs, deleted UUIDs and the last anchor.
private func drain(
    _ store: HealthStore, from anchor: UInt64, limit: Int, filter: SampleFilter = .all
) throws -> (added: [UUID], deleted: [UUID], anchor: UInt64, pages: Int) {
    var anchor = anchor
    var added: [UUID] = []
    var deleted: [UUID] = []
    var pages = 0
    while true {
        let page = try store.changes(subject: "anna", type: "stepCount", filter: filter, anchor: anchor, limit: limit)
        pages += 1
        #expect(limit == 0 || page.added.count + page.deleted.count <= limit)
        #expect(page.anchor >= anchor)
        added += page.added.uuids
        deleted += page.deleted.map(\.uuid)
        anchor = page.anchor
        if !page.hasMore { return (added, deleted, anchor, pages) }
    }
}

@Suite("Changes since an anchor")
struct ChangesTests {
    @Test("paging with small limits over thousands of changes returns every change exactly once, in arrival order")
    func pagingReturnsEveryChangeOnce() throws {
        let store = HealthStore()
        var generator = SplitMix64(seed: 8)
        var expected: [UUID] = []
        var deletedExpected: [UUID] = []
        for b in 0..<40 {
            // Back-dated and forward batches interleaved: arrival order differs from start order.
            let base = Double(Int.random(in: 0..<10_000, using: &generator)) * 3600
            let batch = makeBatch(
                type: "stepCount",
                rows: (0..<100).map { i in
                    Row(sec(base + Double(i) * 60), sec(base + Double(i) * 60 + 30), 1)
                })
            _ = try store.insert(batch)
            expected += (0..<batch.count).map(batch.uuid(row:))
            if b % 5 == 4 {
                let victims = Set(expected.shuffled(using: &generator).prefix(7))
                let removed = try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: victims))
                #expect(removed == victims.count)
                expected.removeAll { victims.contains($0) }
                deletedExpected += victims
            }
        }
        for limit in [1, 7, 64, 0] {
            let all = try drain(store, from: 0, limit: limit)
            #expect(Set(all.added) == Set(expected))
            #expect(all.added.count == expected.count, "limit \(limit): no sample twice")
            #expect(Set(all.deleted) == Set(deletedExpected))
            #expect(all.deleted.count == deletedExpected.count)
            #expect(all.added == expected.filter(Set(all.added).contains), "arrival order, limit \(limit)")
        }
        let last = store.lastAnchor(type: "stepCount")
        let none = try store.changes(subject: "anna", type: "stepCount", anchor: last)
        #expect(none.isEmpty && !none.hasMore && none.anchor == last)
    }

    @Test("a back-dated sample written after an anchor appears in the next call; a deletion too")
    func backDatedAndDeleted() throws {
        let store = HealthStore()
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(sec(1_000_000), sec(1_000_060), 10)]))
        let first = try store.changes(subject: "anna", type: "stepCount", anchor: 0)
        #expect(first.added.count == 1)
        let old = makeBatch(type: "stepCount", rows: [Row(sec(60), sec(120), 5)])
        _ = try store.insert(old)
        let second = try store.changes(subject: "anna", type: "stepCount", anchor: first.anchor)
        #expect(second.added.uuids == [old.uuid(row: 0)])
        #expect(second.added.starts == [sec(60)])
        _ = try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [first.added.uuids[0]]))
        let third = try store.changes(subject: "anna", type: "stepCount", anchor: second.anchor)
        #expect(third.added.count == 0)
        #expect(third.deleted.map(\.uuid) == [first.added.uuids[0]])
    }

    @Test("a sync version replacement reports the old UUID deleted with its sync identifier and the new one added")
    func syncReplacement() throws {
        let store = HealthStore()
        func tagged(_ version: Double) -> SampleBatch {
            var batch = SampleBatch(
                batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
            batch.append(
                start: 0, end: sec(60), value: version, source: fitApp,
                metadata: [MetadataKey.syncIdentifier: .string("s-1"), MetadataKey.syncVersion: .number(version)])
            return batch
        }
        let v1 = tagged(1)
        _ = try store.insert(v1)
        let anchor = store.lastAnchor(type: "stepCount")
        _ = try store.insert(tagged(2))
        let changes = try store.changes(subject: "anna", type: "stepCount", anchor: anchor)
        #expect(changes.added.values == [2])
        #expect(changes.deleted == [DeletedObject(uuid: v1.uuid(row: 0), syncIdentifier: "s-1", syncVersion: 1)])
    }

    @Test("the predicate chooses added samples; the unit converts their values")
    func predicateAndUnit() throws {
        let store = HealthStore()
        _ = try store.insert(
            makeBatch(type: "bodyMass", rows: [Row(sec(0), sec(0), 70, phone), Row(sec(100), sec(100), 71, watch)]))
        let filter = SampleFilter(date: DatePredicate(start: sec(50), end: sec(200)))
        let changes = try store.changes(subject: "anna", type: "bodyMass", filter: filter, anchor: 0, unit: "g")
        #expect(changes.added.values == [71_000])
        let bySource = try store.changes(
            subject: "anna", type: "bodyMass", filter: SampleFilter(sources: [phone.name]), anchor: 0)
        #expect(bySource.added.values == [70])
    }

    @Test("an anchor older than a deletion past the retention, or from the future, is expired")
    func expiredAnchors() throws {
        let store = HealthStore()
        let batch = makeBatch(
            type: "stepCount", rows: (0..<3).map { Row(sec(Double($0) * 60), sec(Double($0) * 60 + 60), 1) })
        _ = try store.insert(batch)
        let before = store.lastAnchor(type: "stepCount")
        _ = try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [batch.uuid(row: 1)]))
        let after = store.lastAnchor(type: "stepCount")
        #expect(try store.changes(subject: "anna", type: "stepCount", anchor: before).deleted.count == 1)
        store.deletionRetention = 0
        // Past the retention even before pruning: the deletion can no longer be promised.
        let error = healthError { _ = try store.changes(subject: "anna", type: "stepCount", anchor: before) }
        #expect(error?.code.rawValue == ErrorCode.anchorExpired.rawValue)
        #expect(error?.message.contains("resync from 0") == true)
        #expect(store.pruneDeletions() == 1)
        #expect(
            healthError { _ = try store.changes(subject: "anna", type: "stepCount", anchor: before) }?.code.rawValue
                == ErrorCode.anchorExpired.rawValue)
        // From the beginning and from after the deletion still work.
        #expect(try store.changes(subject: "anna", type: "stepCount", anchor: 0).added.count == 2)
        #expect(try store.changes(subject: "anna", type: "stepCount", anchor: after).isEmpty)
        let future = healthError { _ = try store.changes(subject: "anna", type: "stepCount", anchor: after + 100) }
        #expect(future?.code.rawValue == ErrorCode.anchorExpired.rawValue)
    }

    @Test("anchors and deletion records survive a snapshot image and restore")
    func imageKeepsTheChangeLog() throws {
        let store = HealthStore()
        let batch = makeBatch(
            type: "stepCount",
            rows: (0..<1500).map { Row(sec(Double(1500 - $0) * 60), sec(Double(1500 - $0) * 60 + 1), 1) })
        _ = try store.insert(batch)
        let middle = try store.changes(subject: "anna", type: "stepCount", anchor: 0, limit: 700).anchor
        _ = try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [batch.uuid(row: 3)]))
        let expected = try store.changes(subject: "anna", type: "stepCount", anchor: middle)
        let (image, _) = store.image(of: try QuantityType.named("stepCount")) { 0 }
        let restored = HealthStore()
        try restored.restore(image)
        #expect(try restored.lastAnchor(type: "stepCount") == store.lastAnchor(type: "stepCount"))
        #expect(try restored.changes(subject: "anna", type: "stepCount", anchor: middle) == expected)
        _ = try restored.insert(makeBatch(type: "stepCount", rows: [Row(0, 1, 1)]))
        #expect(try restored.lastAnchor(type: "stepCount") == store.lastAnchor(type: "stepCount") + 1)
    }

    @Test("changed spans cover the added and deleted samples, merged")
    func changedSpans() throws {
        let store = HealthStore()
        let batch = makeBatch(
            type: "stepCount", rows: [Row(sec(0), sec(10), 1), Row(sec(5), sec(20), 1), Row(sec(100), sec(110), 1)])
        _ = try store.insert(batch)
        let anchor = store.lastAnchor(type: "stepCount")
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(sec(500), sec(600), 1)]))
        _ = try store.delete(
            subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [batch.uuid(row: 0), batch.uuid(row: 1)]))
        let spans = try store.changedSpans(subject: "anna", type: "stepCount", after: anchor)
        #expect(spans.spans == [sec(0)...sec(20), sec(500)...sec(600)])
        #expect(spans.anchor == (try store.lastAnchor(type: "stepCount")))
        #expect(try store.changedSpans(subject: "anna", type: "stepCount", after: 0).spans.count == 3)
    }
}
