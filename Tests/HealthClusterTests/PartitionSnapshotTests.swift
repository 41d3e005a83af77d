import Foundation
import HealthCluster
import HealthCodec
import HealthEngine
import HealthModel
import HealthStorage
import Testing
import TestSupport

/// Partition snapshots in JetStream on a real nats-server: a node taking a partition over loads its snapshot and
/// replays only the stream after it, ending with exactly what a node replaying the whole stream holds (samples,
/// deletions, workouts, characteristics, change anchors); the stream keeps only what the snapshot does not cover;
/// heads only move forward.
@Suite("Partition snapshots in JetStream")
struct PartitionSnapshotTests {
    static let subjects = (0..<10).map { "person-\($0)" }
    static let t0: Timestamp = 1_700_000_000_000_000

    /// What clients read of every subject: samples, every change from anchor 0 and from `anchor`, workouts,
    /// characteristics.
    struct View: Equatable {
        var samples: [SampleQueryResult] = []
        var changes: [ChangeSet] = []
        var workouts: [ObjectQueryResult<Workout>] = []
        var characteristics: [Characteristics] = []
    }

    static func view(_ store: HealthStore, changesAfter anchor: UInt64) throws -> View {
        var view = View()
        for subject in subjects {
            view.samples.append(try store.samples(subject: subject, type: "stepCount"))
            view.changes.append(try store.changes(subject: subject, type: "stepCount", anchor: 0))
            view.changes.append(try store.changes(subject: subject, type: "stepCount", anchor: anchor))
            view.workouts.append(try store.workouts.workouts(subject: subject))
            view.characteristics.append(store.characteristics(subject: subject))
        }
        return view
    }

    /// Writes `count` changes of every kind a snapshot holds through `durable`, batch ids from `firstID`, the
    /// subjects picked by `random`.
    static func write(
        _ durable: DurableStore, count: Int, firstID: UInt64, random: inout SplitMix64
    ) throws {
        for i in 0..<count {
            let subject = subjects[Int(random.next() % UInt64(subjects.count))]
            let id = firstID + UInt64(i)
            switch random.next() % 6 {
            case 0:
                _ = try durable.delete(
                    subject: subject, type: "stepCount",
                    filter: SampleFilter(date: DatePredicate(start: Int64(random.next() % 120) * Micros.minute)))
            case 1:
                let start = t0 + Int64(id) * Micros.hour
                try durable.insertWorkouts(
                    subject: subject,
                    [Workout(activityType: .running, start: start, end: start + 30 * Micros.minute, source: watch)])
            case 2:
                _ = try durable.setCharacteristics(
                    subject: subject, [CharacteristicEntry(key: "bloodType", value: "HKBloodTypeAPositive")])
            default:
                _ = try durable.insert(
                    stepBatch(id: id, subject: subject, from: Int(id % 40) * 3, rows: 1 + Int(random.next() % 6)))
            }
        }
    }

    @Test(
        "A new owner loads the partition's snapshot and replays only the stream after it, ending where a full replay ends"
    )
    func takeoverFromSnapshot() async throws {
        let server = try await NATSServer()
        let (writer, writerLog) = try openNode(url: server.url, partitions: 3, anchorsFromSequences: true)
        var random = SplitMix64(seed: TestSeed.value(31))
        try Self.write(writer, count: 150, firstID: 1, random: &random)
        // A node that applied the streams as they were before the snapshot, to be caught up afterwards.
        let (behind, behindLog) = try openNode(url: server.url, partitions: 3, anchorsFromSequences: true)
        let middle = (0..<3).map { writerLog.lastApplied($0) }
        try Self.write(writer, count: 60, firstID: 500, random: &random)

        let snapshots = PartitionSnapshots(jetStream: writerLog.jetStream, layout: writerLog.layout)
        for index in 0..<3 {
            let head = try #require(try snapshots.write(index, store: writer.store, log: writerLog))
            #expect(head.sequence == writerLog.lastApplied(index), "nothing else was writing")
            #expect(head.parts.count == QuantityType.all.count + 5)
            let latest = try #require(try snapshots.latest(index))
            #expect(latest.head == head)
            // The stream keeps only what follows the snapshot.
            let stream = try writerLog.jetStream.streamState(writerLog.layout.streamName(index))
            #expect(stream.firstSequence == head.sequence + 1)
            #expect(stream.messages == 0)
            // Nothing new: no second snapshot.
            #expect(try snapshots.write(index, store: writer.store, log: writerLog) == nil)
        }
        try Self.write(writer, count: 60, firstID: 1000, random: &random)
        let anchor = Self.subjects.map { writer.store.lastAnchor(type: "stepCount", subject: $0) }.max() ?? 0
        let expected = try Self.view(writer.store, changesAfter: anchor / 2)

        // A node that never held the partitions: snapshot, then the 60 changes after it.
        let (fresh, freshLog) = try openNode(url: server.url, partitions: 3, anchorsFromSequences: true)
        #expect(try Self.view(fresh.store, changesAfter: anchor / 2) == expected)
        #expect((0..<3).allSatisfy { freshLog.lastApplied($0) == writerLog.lastApplied($0) })

        // A node whose state predates the snapshot cannot read the records it lacks any more: it takes the
        // snapshot instead, replacing what it held of each partition.
        #expect((0..<3).map { behindLog.lastApplied($0) } == middle)
        for index in 0..<3 {
            behindLog.takeOver(index)
            let caughtUp = try behindLog.catchUp(index, into: behind.store)
            #expect(caughtUp.snapshot != nil, "partition \(index)")
        }
        #expect(try Self.view(behind.store, changesAfter: anchor / 2) == expected)

        // And the owner's snapshot sequence is where a partition's change anchors continue from at every node.
        let subject = Self.subjects[0]
        let next = stepBatch(id: 5000, subject: subject, from: 900, rows: 2)
        _ = try writer.insert(next)
        try freshLog.catchUp(writerLog.layout.partition(of: subject), into: fresh.store)
        #expect(
            fresh.store.lastAnchor(type: "stepCount", subject: subject)
                == writer.store.lastAnchor(type: "stepCount", subject: subject))
    }

    @Test("A snapshot is written only over the head its writer read, and only when it covers more")
    func headsMoveForward() async throws {
        let server = try await NATSServer()
        let (writer, writerLog) = try openNode(url: server.url, partitions: 1, anchorsFromSequences: true)
        _ = try writer.insert(stepBatch(id: 1, subject: "anna"))
        let (stale, staleLog) = try openNode(url: server.url, partitions: 1, anchorsFromSequences: true)
        _ = try writer.insert(stepBatch(id: 2, subject: "anna", from: 10))
        let snapshots = PartitionSnapshots(jetStream: writerLog.jetStream, layout: writerLog.layout)
        let head = try #require(try snapshots.write(0, store: writer.store, log: writerLog))
        #expect(head.sequence == 2)
        // A node that applied less (a former owner) does not write over it.
        #expect(try snapshots.write(0, store: stale.store, log: staleLog) == nil)
        #expect(try snapshots.latest(0)?.head == head)
        // The fence itself: a head expecting another last head is refused.
        let jetStream = writerLog.jetStream
        let subject = "hk.snap.0.head"
        let current = try #require(try jetStream.lastMessage(PartitionSnapshots.streamName, subject: subject))
        #expect(throws: NATSFailure.self) {
            _ = try jetStream.publish(head.encode(), to: subject, expectedLastOnSubject: current.sequence - 1)
        }
        #expect(throws: NATSFailure.self) {
            _ = try jetStream.publish(head.encode(), to: subject, expectedLastOnSubject: 0)
        }
        #expect(
            try jetStream.lastMessage(PartitionSnapshots.streamName, subject: subject)?.sequence == current.sequence)
    }

    @Test("A new owner whose stream was cut below what it applied gets a retryable error, not a silent gap")
    func gapIsRefused() async throws {
        let server = try await NATSServer()
        let (writer, writerLog) = try openNode(url: server.url, partitions: 1)
        for id in 1...5 { _ = try writer.insert(stepBatch(id: UInt64(id), subject: "anna", from: id * 10)) }
        // Records 1-3 dropped without a snapshot covering them (damage, or an operator's purge).
        try writerLog.jetStream.purge("HK_P0", subject: "hk.p.0", below: 4)
        do {
            _ = try openNode(url: server.url, partitions: 1)
            Issue.record("a stream missing records 1-3 was replayed")
        } catch let error as HealthError {
            #expect(error.code.rawValue == ErrorCode.storageUnavailable.rawValue)
            #expect(error.message.contains("holds no record 1"), "\(error.message)")
        }
    }

    @Test("The head decodes what it encodes; every truncation and a flipped byte are refused with an offset")
    func headCodec() throws {
        let head = PartitionSnapshotHead(
            partition: 7, firstData: 12, lastData: 40, dataMessages: 3, dataCRC: 0xDEAD_BEEF,
            parts: [
                .init(type: "stepCount", sequence: 99, size: 300_000), .init(type: "workout", sequence: 98, size: 0),
            ])
        let bytes = head.encode()
        #expect(try PartitionSnapshotHead.decode(bytes) == head)
        #expect(head.sequence == 98)
        #expect(head.dataBytes == 300_000)
        for length in 0..<bytes.count {
            #expect(throws: CodecError.self) { try PartitionSnapshotHead.decode(Array(bytes[..<length])) }
        }
        var flipped = bytes
        flipped[20] ^= 1
        #expect(throws: CodecError.self) { try PartitionSnapshotHead.decode(flipped) }
    }
}
