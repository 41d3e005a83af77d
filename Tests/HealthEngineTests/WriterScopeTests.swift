import Foundation
import HealthModel
import Testing

@testable import HealthEngine

/// Batch ids are each client identity's own: one identity's batch id never answers for another's batch.
@Suite("batch ids scoped to their writer")
struct WriterScopeTests {
    static let anna: UInt32 = 1
    static let ben: UInt32 = 2

    static func batch(id: UInt64, rows: Int, from: Int = 0, value: Double = 5, uuids: Bool) -> SampleBatch {
        var batch = SampleBatch(batchID: id, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for row in from..<(from + rows) {
            let start = Timestamp(row) * Micros.minute
            batch.append(
                start: start, end: start + Micros.minute, value: value, source: phone, uuid: uuids ? UUID() : nil)
        }
        return batch
    }

    @Test("another identity's batch with the same id and its own UUIDs is stored, not answered with the first ack")
    func sameIDOwnUUIDs() throws {
        let store = HealthStore()
        let id = freshBatchID()
        let first = Self.batch(id: id, rows: 5, uuids: true)
        #expect(
            try store.insert(first, writer: Self.ben, beforeApplying: {}) == InsertResult(inserted: 5, duplicates: 0))
        let second = Self.batch(id: id, rows: 4, from: 10, uuids: true)
        #expect(
            try store.insert(second, writer: Self.anna, beforeApplying: {}) == InsertResult(inserted: 4, duplicates: 0))
        #expect(try store.samples(subject: "anna", type: "stepCount").count == 9)
        // Each identity's own retry still repeats its own first acknowledgement.
        #expect(
            try store.insert(first, writer: Self.ben, beforeApplying: {}) == InsertResult(inserted: 5, duplicates: 0))
        #expect(
            try store.insert(second, writer: Self.anna, beforeApplying: {}) == InsertResult(inserted: 4, duplicates: 0))
        #expect(try store.samples(subject: "anna", type: "stepCount").count == 9)
    }

    @Test(
        "another identity's batch with the same id and derived UUIDs is refused with uuidConflict, never dropped",
        arguments: [2, 50])
    func sameIDDerivedUUIDs(rows: Int) throws {
        let store = HealthStore()
        let id = freshBatchID()
        _ = try store.insert(Self.batch(id: id, rows: rows, uuids: false), writer: Self.ben, beforeApplying: {})
        for value in [5.0, 7.0] {  // the same content, and other content
            let error = healthError {
                _ = try store.insert(
                    Self.batch(id: id, rows: rows, value: value, uuids: false), writer: Self.anna, beforeApplying: {})
            }
            #expect(error?.code.rawValue == ErrorCode.uuidConflict.rawValue)
            #expect(error?.message.contains("another identity") == true, "\(error?.message ?? "")")
        }
        #expect(try store.samples(subject: "anna", type: "stepCount").count == rows)
        // A fresh id works.
        let fresh = Self.batch(id: freshBatchID(), rows: rows, uuids: false)
        #expect(try store.insert(fresh, writer: Self.anna, beforeApplying: {}).inserted == rows)
    }
}
