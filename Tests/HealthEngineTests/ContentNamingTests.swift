import Foundation
import HealthModel
import Testing

@testable import HealthEngine

/// Rows whose UUIDs derive from their content keep no UUID: an element identity keeps its 8-byte extras, a content
/// identity nothing, and both are found again from the row (``RowNaming``, Protocol/STORAGE.md "The batch table").
struct ContentNamingTests {
    static let type = try! QuantityType.named("heartRate")

    /// A row's element identity: its content identity's state with `extras` mixed in (what `hkq import` sends).
    static func elementUUID(_ start: Timestamp, _ value: Double, source: SourceInfo = watch, extras: UInt64) -> UUID {
        SampleElementIdentity.uuid(base: contentHash(start, value, source: source), extras: extras)
    }

    static func contentHash(_ start: Timestamp, _ value: Double, source: SourceInfo = watch) -> ContentHash128 {
        SampleContentIdentity.hash(
            sourceName: Array(source.name.utf8), typeIdentifier: Array(type.identifier.utf8), start: start,
            end: start, canonicalValue: value)
    }

    /// A heart-rate batch of `rows` minutes from `first`, each named as `name` says.
    static func batch(first: Int = 0, rows: Int, name: (Timestamp, Double, Int) -> UUID) -> SampleBatch {
        var batch = SampleBatch(
            batchID: freshBatchID(), subject: "anna", typeIdentifier: "heartRate", unit: "count/min")
        for row in first..<(first + rows) {
            let start = Timestamp(Int64(row) * 60_000_000)
            let value = Double(60 + row % 40)
            batch.append(start: start, end: start, value: value, source: watch, uuid: name(start, value, row))
        }
        return batch
    }

    @Test("imported records keep 8 bytes of extras and no index entry; queries, restarts and retries name them")
    func elementIdentities() throws {
        let store = HealthStore()
        var random = SplitMix64(seed: 42)
        let extras = (0..<5_000).map { _ in random.next() }
        let sent = Self.batch(rows: 5_000) { start, value, row in Self.elementUUID(start, value, extras: extras[row]) }
        #expect(try store.insert(sent) == InsertResult(inserted: 5_000, duplicates: 0))
        let memory = store.info().memory
        #expect(memory.keptUUIDs == 0 && memory.uuidIndex == 0)
        #expect(memory.elementExtras >= 5_000 * 8 && memory.elementExtras < 5_000 * 16)
        #expect(try store.samples(subject: "anna", type: Self.type).uuids == sent.uuids)

        // The same records in another batch (an export imported again) add nothing.
        var again = sent
        again.batchID = freshBatchID()
        #expect(try store.insert(again) == InsertResult(inserted: 0, duplicates: 5_000))

        // An image restored into a new store names them the same, and they are still recognised.
        let (image, _) = store.image(of: Self.type) { () }
        #expect(image.series[0].batches.allSatisfy { if case .elements = $0.naming { true } else { false } })
        let restored = HealthStore()
        try restored.restore(image)
        #expect(try restored.samples(subject: "anna", type: Self.type).uuids == sent.uuids)
        again.batchID = freshBatchID()
        #expect(try restored.insert(again) == InsertResult(inserted: 0, duplicates: 5_000))
    }

    @Test("content identities (hkq insert) keep nothing; a batch mixing forms keeps its UUIDs as sent")
    func contentIdentitiesAndMixedBatches() throws {
        let store = HealthStore()
        let content = Self.batch(rows: 100) { start, value, _ in Self.contentHash(start, value).uuid }
        #expect(try store.insert(content).inserted == 100)
        var memory = store.info().memory
        #expect(memory.keptUUIDs == 0 && memory.elementExtras == 0 && memory.uuidIndex == 0)
        #expect(try store.samples(subject: "anna", type: Self.type).uuids == content.uuids)

        var random = SplitMix64(seed: 7)
        let mixed = Self.batch(first: 100, rows: 10) { start, value, row in
            row % 2 == 0
                ? Self.elementUUID(start, value, extras: random.next())
                : random.nextUUID()
        }
        #expect(try store.insert(mixed).inserted == 10)
        memory = store.info().memory
        #expect(memory.keptUUIDs >= 10 * 16 && memory.uuidIndex > 0)
        #expect(try store.samples(subject: "anna", type: Self.type).uuids == content.uuids! + mixed.uuids!)
    }

    @Test("a UUID named by content sent again with other content is a conflict, at its start or another")
    func conflicts() throws {
        let store = HealthStore()
        let stored = Self.batch(rows: 50) { start, value, row in Self.elementUUID(start, value, extras: UInt64(row)) }
        _ = try store.insert(stored)
        let uuid = stored.uuids![20]
        for start in [stored.starts[20], stored.starts[20] + 1_000_000] {
            var changed = SampleBatch(
                batchID: freshBatchID(), subject: "anna", typeIdentifier: "heartRate", unit: "count/min")
            changed.append(start: start, end: start, value: 199, source: watch, uuid: uuid)
            #expect { try store.insert(changed) } throws: { ($0 as? HealthError)?.code == .uuidConflict }
        }
        // A content identity reused for other content: kept as sent, and refused as well.
        let content = Self.batch(first: 100, rows: 5) { start, value, _ in Self.contentHash(start, value).uuid }
        _ = try store.insert(content)
        var moved = SampleBatch(
            batchID: freshBatchID(), subject: "anna", typeIdentifier: "heartRate", unit: "count/min")
        moved.append(start: 1, end: 1, value: 70, source: watch, uuid: content.uuids![2])
        #expect { try store.insert(moved) } throws: { ($0 as? HealthError)?.code == .uuidConflict }
        #expect(try store.samples(subject: "anna", type: Self.type).count == 55)
    }

    @Test("samples named by content are deleted by UUID and their deletions report that UUID")
    func deletions() throws {
        let store = HealthStore()
        let stored = Self.batch(rows: 30) { start, value, row in Self.elementUUID(start, value, extras: UInt64(row) * 3)
        }
        _ = try store.insert(stored)
        let anchor = try store.changes(subject: "anna", type: Self.type, anchor: 0).anchor
        let gone = stored.uuids![7]
        #expect(try store.delete(subject: "anna", type: Self.type, filter: SampleFilter(uuids: [gone])) == 1)
        let changes = try store.changes(subject: "anna", type: Self.type, anchor: anchor)
        #expect(changes.deleted.map(\.uuid) == [gone])
        #expect(try !store.samples(subject: "anna", type: Self.type).uuids.contains(gone))
        // Deleted, it may be inserted again.
        var back = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "heartRate", unit: "count/min")
        back.append(start: stored.starts[7], end: stored.ends[7], value: stored.values[7], source: watch, uuid: gone)
        #expect(try store.insert(back).inserted == 1)
    }
}
