import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix
import TestSupport
import Testing

@testable import HealthStorage

/// Correlations in the log (record kinds 9 and 10), in their own snapshot file, and through restarts.
@Suite(.serialized)
struct CorrelationStorageTests {
    static let t0: Timestamp = 1_700_000_000_000_000

    /// `count` blood pressure readings a day apart, with metadata.
    static func readings(_ count: Int, from day: Int = 0) -> [Correlation] {
        let systolic = try! QuantityType.named("bloodPressureSystolic")
        let diastolic = try! QuantityType.named("bloodPressureDiastolic")
        var random = SplitMix64(seed: UInt64(day) + 1)
        return (day..<day + count).map { day in
            let start = t0 + Int64(day) * Micros.day
            return Correlation(
                type: .bloodPressure, start: start, end: start, source: SourceInfo(name: "Cuff"),
                metadata: ["HKWasUserEntered": .number(Double(day % 2))],
                members: [
                    CorrelationMember(uuid: uuid(&random), type: systolic),
                    CorrelationMember(uuid: uuid(&random), type: diastolic),
                ])
        }
    }

    /// A UUID of two draws of `random`.
    static func uuid(_ random: inout SplitMix64) -> UUID {
        let (a, b) = (random.next(), random.next())
        return withUnsafeBytes(of: (a, b)) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    static func all(_ store: HealthStore) throws -> ObjectQueryResult<Correlation> {
        try store.correlations.correlations(subject: "anna")
    }

    @Test("correlation records encode and decode to the same change; other types and cut payloads are refused")
    func logRecords() throws {
        let changes: [LogChange] = [
            .correlations(subject: "anna", Self.readings(3), writer: 7),
            .correlationDelete(subject: "anna", uuids: [Self.readings(1)[0].uuid], writer: nil),
            .correlationDelete(subject: "anna", uuids: [Self.readings(1)[0].uuid], writer: 4),
        ]
        for change in changes {
            #expect([9, 10].contains(change.kind.rawValue) && change.type == "correlation")
            #expect(try LogChange.decode(kind: change.kind.rawValue, payload: change.encodePayload()) == change)
        }
        var wrongType = ByteWriter()
        wrongType.writeString("anna")
        wrongType.writeString("workout")
        wrongType.writeVarint(0)
        wrongType.writeVarint(0)
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 9, payload: wrongType.bytes) }
        var payload = try changes[0].encodePayload()
        payload.removeLast()
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 9, payload: payload) }
    }

    @Test("the correlation snapshot round-trips, and a flipped byte, a truncation or a workout magic is damage")
    func snapshotCodec() throws {
        let store = CorrelationStore()
        try store.insert(subject: "anna", Self.readings(4), writer: 2)
        try store.insert(subject: "ben", Self.readings(1))
        try store.delete(subject: "anna", uuids: [Self.readings(1)[0].uuid])
        let (image, _) = store.image { 17 }
        let bytes = CorrelationSnapshotCodec.encode(image, sequence: 17)
        #expect(Array(bytes.prefix(8)) == Array("HKCOR001".utf8))
        let decoded = try CorrelationSnapshotCodec.decode(bytes)
        #expect(decoded.sequence == 17 && decoded.image == image)
        for index in [0, 9, bytes.count / 2, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x40
            #expect(throws: CodecError.self) { try CorrelationSnapshotCodec.decode(damaged) }
        }
        #expect(throws: CodecError.self) { try CorrelationSnapshotCodec.decode(Array(bytes.dropLast(5))) }
        #expect(throws: CodecError.self) { try WorkoutSnapshotCodec.decode(bytes) }
    }

    @Test("correlations survive a stop without a snapshot (replayed) and one with a snapshot; none: no file")
    func restarts() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (plain, _) = try openStore(directory)
        _ = try plain.insert(stepBatch(id: 1, rows: 3))
        plain.close()  // a data directory as older versions leave it: no correlation entry, no file
        #expect(try !FileSystem.contentsOfDirectory(directory + "/snapshots").contains { $0.hasPrefix("correlation-") })

        let (durable, _) = try openStore(directory)
        #expect(try durable.insertCorrelations(subject: "anna", Self.readings(5), writer: 3) == (5, 0))
        #expect(try durable.insertCorrelations(subject: "anna", Self.readings(5), writer: 3) == (0, 5))
        #expect(try durable.deleteCorrelations(subject: "anna", uuids: [Self.readings(1)[0].uuid]) == 1)
        let before = try Self.all(durable.store)
        #expect(before.objects.count == 4 && before.lastAnchor == 6)
        durable.close(snapshot: false)

        let (replayed, _) = try openStore(directory)
        #expect(replayed.recovery.replayedRecords == 2)
        #expect(try Self.all(replayed.store) == before)
        try replayed.insertCorrelations(subject: "anna", Self.readings(1, from: 9))
        let afterReplay = try Self.all(replayed.store)
        #expect(afterReplay.lastAnchor == 7 && afterReplay.objects.last?.anchor == 7)
        replayed.close()

        let files = try FileSystem.contentsOfDirectory(directory + "/snapshots")
        #expect(files.contains { $0.hasPrefix("correlation-") && $0.hasSuffix(".snap") })
        let (restored, _) = try openStore(directory)
        defer { restored.close() }
        #expect(restored.recovery.replayedRecords == 0)
        #expect(try Self.all(restored.store) == afterReplay)
        #expect(restored.store.info().samplesByType["stepCount"] == 3)
        let changes = try restored.store.correlations.correlations(
            subject: "anna", filter: CorrelationFilter(afterAnchor: 5))
        #expect(changes.deletions.map(\.uuid) == [Self.readings(1)[0].uuid])
        #expect(changes.objects.map(\.anchor) == [7])
    }
}
