import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Metadata kept with the samples (HEALTHKIT.md §3): returned by sample and changes queries, following rows
/// through merges, duplicates and deletes, and through a shard image.
@Suite("Metadata storage")
struct MetadataStorageTests {
    static let every: [String: MetadataValue] = [
        "HKTimeZone": .string("Europe/Berlin"),
        "HKMetadataKeyHeartRateEventThreshold": .quantity(120, unit: "count/min"),
        "HKWasUserEntered": .number(1), "observed": .date(1_700_000_000_000_000),
    ]

    static func batch(id: UInt64, rows: [(start: Double, metadata: [String: MetadataValue])]) -> SampleBatch {
        var batch = SampleBatch(batchID: id, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for (index, row) in rows.enumerated() {
            batch.append(
                start: sec(row.start), end: sec(row.start + 60), value: Double(index + 1), source: watch,
                metadata: row.metadata)
        }
        return batch
    }

    @Test("every value type comes back on its row, after a late out-of-order batch merged among the rows")
    func roundTrip() throws {
        let store = HealthStore()
        _ = try store.insert(Self.batch(id: 1, rows: [(0, Self.every), (120, [:]), (240, ["a": .string("x")])]))
        _ = try store.insert(Self.batch(id: 2, rows: [(60, ["late": .number(2)]), (180, [:])]))
        let result = try store.samples(subject: "anna", type: "stepCount")
        #expect(result.starts == [0, 60, 120, 180, 240].map { sec($0) })
        #expect(result.metadata == [Self.every, ["late": .number(2)], [:], [:], ["a": .string("x")]])
        let later = try store.samples(subject: "anna", type: "stepCount", sort: .startDescending, limit: 2)
        #expect(later.metadata == [["a": .string("x")], [:]])
        let changes = try store.changes(subject: "anna", type: "stepCount", anchor: 0)
        #expect(changes.added.metadata?.compactMap { $0["late"] } == [.number(2)])
    }

    @Test("metadata predicates select exactly the samples with the key, or with one of the allowed values")
    func predicates() throws {
        let store = HealthStore()
        _ = try store.insert(
            Self.batch(
                id: 1,
                rows: [
                    (0, ["HKTimeZone": .string("Europe/Berlin"), "n": .number(2)]),
                    (60, ["HKTimeZone": .string("UTC")]),
                    (120, [:]), (180, ["n": .number(3)]), (240, Self.every),
                ]))
        func starts(_ predicates: [MetadataPredicate]) throws -> [Timestamp] {
            try store.samples(subject: "anna", type: "stepCount", filter: SampleFilter(metadata: predicates)).starts
        }
        #expect(try starts([MetadataPredicate(key: "HKTimeZone")]) == [0, 60, 240].map { sec($0) })
        #expect(
            try starts([MetadataPredicate(key: "HKTimeZone", allowedValues: [.string("Europe/Berlin")])])
                == [0, 240].map { sec($0) })
        #expect(try starts([MetadataPredicate(key: "n", allowedValues: [.number(3), .number(9)])]) == [sec(180)])
        #expect(
            try starts([MetadataPredicate(key: "HKTimeZone"), MetadataPredicate(key: "n")]) == [sec(0)])
        #expect(try starts([MetadataPredicate(key: "absent")]) == [])
        #expect(try starts([]) == [0, 60, 120, 180, 240].map { sec($0) })
        let statistics = try store.statistics(
            subject: "anna", type: "stepCount", filter: SampleFilter(metadata: [MetadataPredicate(key: "n")]),
            options: .cumulativeSum)
        #expect(statistics.figures.sum == 5.0)  // rows 1 and 4 (values 1 and 4) carry "n"
        let error = healthError {
            _ = try starts([MetadataPredicate(key: "")])
        }
        #expect(error?.code.rawValue == ErrorCode.invalidPredicate.rawValue)
        let dated = healthError {
            _ = try starts([MetadataPredicate(key: "observed", allowedValues: [.date(0)])])
        }
        #expect(dated?.code.rawValue == ErrorCode.invalidPredicate.rawValue)
    }

    @Test("rows without metadata cost nothing and queries report none")
    func noMetadata() throws {
        let store = HealthStore()
        _ = try store.insert(Self.batch(id: 1, rows: [(0, [:]), (60, [:])]))
        #expect(try store.samples(subject: "anna", type: "stepCount").metadata == nil)
        let (image, _) = store.image(of: try QuantityType.named("stepCount")) { () }
        #expect(image.series[0].metadata.isEmpty)
    }

    @Test("deleting a row drops its metadata; a duplicate keeps the first; an image restores it")
    func deleteDuplicateImage() throws {
        let store = HealthStore()
        let first = Self.batch(id: 1, rows: [(0, ["k": .number(1)]), (60, ["k": .number(2)])])
        _ = try store.insert(first)
        var resent = first
        resent.batchID = 9
        resent.uuids = (0..<2).map { SampleBatch.derivedUUID(batchID: 1, row: UInt32($0)) }
        resent.metadata = [["k": .number(7)], ["k": .number(8)]]
        #expect(try store.insert(resent).duplicates == 2)
        let uuids = try store.samples(subject: "anna", type: "stepCount").uuids
        #expect(try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [uuids[0]])) == 1)
        #expect(try store.samples(subject: "anna", type: "stepCount").metadata == [["k": .number(2)]])
        let type = try QuantityType.named("stepCount")
        let (image, _) = store.image(of: type) { () }
        #expect(image.series[0].metadata.entries.map(\.metadata) == [["k": .number(2)]])
        let restored = HealthStore()
        try restored.restore(image)
        #expect(try restored.samples(subject: "anna", type: "stepCount").metadata == [["k": .number(2)]])
        var stray = image
        stray.series[0].metadata.set(["k": .number(3)], anchor: 999)
        #expect(throws: HealthError.self) { try HealthStore().restore(stray) }
    }
}
