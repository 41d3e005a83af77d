import Foundation
import HealthModel
import Testing

@testable import HealthEngine

/// Cluster mode's anchors (``HealthStore/init(anchorsFromSequences:)``): a change logged at sequence `s` of its
/// partition's log takes anchors from `s << 32` on, so two nodes replaying one partition agree on its anchors
/// whatever else they hold.
@Suite("Anchors derived from log sequences")
struct SequencedAnchorTests {
    static func batch(_ subject: String, minutes: Range<Int>) -> SampleBatch {
        makeBatch(
            subject: subject, type: "stepCount",
            rows: minutes.map { Row(sec(Double($0) * 60), sec(Double($0) * 60 + 30), 1) })
    }

    @Test("Two stores replaying the same changes at the same sequences agree on the anchors, whatever else they hold")
    func anchorsDependOnSequencesOnly() throws {
        let old = HealthStore(anchorsFromSequences: true)
        let new = HealthStore(anchorsFromSequences: true)
        // The new owner also holds another partition's subject, with changes at higher sequences.
        _ = try new.insert(Self.batch("bert", minutes: 0..<50), sequencedBy: { 900 })
        let first = Self.batch("anna", minutes: 0..<3)
        let second = Self.batch("anna", minutes: 10..<12)
        for store in [old, new] { _ = try store.insert(first, sequencedBy: { 5 }) }
        let anchor = try old.changes(subject: "anna", type: "stepCount", anchor: 0).anchor
        #expect(anchor == 5 << 32 + 3)
        #expect(try new.changes(subject: "anna", type: "stepCount", anchor: 0).anchor == anchor)
        for store in [old, new] {
            _ = try store.insert(second, sequencedBy: { 7 })
            _ = try store.delete(
                subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [first.uuid(row: 0)]),
                sequencedBy: { 8 })
        }
        for store in [old, new] {
            let since = try store.changes(subject: "anna", type: "stepCount", anchor: anchor)
            #expect(since.added.uuids == (0..<second.count).map(second.uuid(row:)))
            #expect(since.deleted.map(\.uuid) == [first.uuid(row: 0)])
            #expect(since.anchor == 8 << 32 + 1)
            #expect(try store.lastAnchor(type: "stepCount", subject: "anna") == 8 << 32 + 1)
        }
        // Another subject's newer anchors are not this subject's: an anchor past anna's newest is refused.
        #expect(throws: HealthError.self) {
            try new.changes(subject: "anna", type: "stepCount", anchor: 900 << 32 + 1)
        }
    }

    @Test("Workouts: the same anchors and the subject's own newest anchor, whatever else the store holds")
    func workoutAnchorsDependOnSequencesOnly() throws {
        let old = WorkoutStore(anchorsFromSequences: true)
        let new = WorkoutStore(anchorsFromSequences: true)
        try new.insert(subject: "bert", [WorkoutStoreTests.workout(.walking, day: 0)], sequencedBy: { 900 })
        let first = [WorkoutStoreTests.workout(.running, day: 1), WorkoutStoreTests.workout(.running, day: 2)]
        let second = WorkoutStoreTests.workout(.cycling, day: 3)
        for store in [old, new] { try store.insert(subject: "anna", first, sequencedBy: { 5 }) }
        let anchor = try old.workouts(subject: "anna").lastAnchor
        #expect(anchor == 5 << 32 + 2)
        #expect(try new.workouts(subject: "anna").lastAnchor == anchor)
        for store in [old, new] {
            try store.insert(subject: "anna", [second], sequencedBy: { 6 })
            try store.delete(subject: "anna", uuids: [first[0].uuid], sequencedBy: { 7 })
            let since = try store.workouts(subject: "anna", filter: WorkoutFilter(afterAnchor: anchor))
            #expect(since.workouts.map(\.workout.uuid) == [second.uuid])
            #expect(since.deletions.map(\.uuid) == [first[0].uuid])
            #expect(since.lastAnchor == 7 << 32 + 1)
        }
    }
}
