import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import Testing

@testable import HealthStorage

/// The writer id in log records and snapshots, and reading what hkd wrote before it existed.
struct WriterFormatTests {
    @Test("an insert by an identity is record kind 4, writer 0 stays kind 1; a delete filter keeps its writer")
    func records() throws {
        let batch = stepBatch(id: 3, rows: 2)
        let byIdentity = LogChange.insert(batch, writer: 70_000)
        #expect(byIdentity.kind == 4 && LogChange.insert(batch).kind == 1)
        #expect(try LogChange.decode(kind: 4, payload: byIdentity.encodePayload()) == byIdentity)
        // Kind 1 bytes are exactly what hkd wrote before writers existed.
        #expect(try LogChange.insert(batch).encodePayload() == LogChange.insert(batch, writer: 0).encodePayload())
        let delete = LogChange.delete(subject: "anna", type: "stepCount", filter: SampleFilter(writer: 12))
        #expect(try LogChange.decode(kind: 2, payload: delete.encodePayload()) == delete)
        var zero = try LogChange.insert(batch).encodePayload()
        zero.insert(0, at: 2 + "anna".utf8.count + "stepCount".utf8.count)
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 4, payload: zero) }
    }

    @Test("HKSNAP03 keeps writers, arrival anchors, deletion records with their writers and the newest anchor")
    func snapshotVersion3() throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 4), writer: 9, beforeApplying: {})
        _ = try store.insert(stepBatch(id: 2, from: 10, rows: 3), writer: 11, beforeApplying: {})
        let first = try store.samples(subject: "anna", type: "stepCount").uuids[0]
        #expect(try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [first])) == 1)
        let type = try QuantityType.named("stepCount")
        let (image, _) = store.image(of: type) { () }
        #expect(image.series[0].writers == [9, 9, 9, 11, 11, 11])
        #expect(image.series[0].arrivals == [2, 3, 4, 5, 6, 7])
        #expect(image.series[0].changeLog.deletions.map(\.writer) == [9])
        #expect(image.lastAnchor == 8)
        let bytes = SnapshotCodec.encode(image, sequence: 5)
        #expect(Array(bytes.prefix(8)) == Array("HKSNAP03".utf8))
        let decoded = try SnapshotCodec.decode(bytes)
        #expect(decoded.image == image)
        #expect(decoded.image.series[0].changeLog.deletions[0].writer == 9)
        #expect(decoded.sequence == 5)
    }

    @Test("HKSNAP02 (writers, no change log) and HKSNAP01 (neither) still read; rows get anchors in load order")
    func olderSnapshots() throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 4), writer: 9, beforeApplying: {})
        let type = try QuantityType.named("stepCount")
        let (image, _) = store.image(of: type) { () }
        let current = SnapshotCodec.encode(image, sequence: 5)

        let version2 = try SnapshotCodec.decode(WriterFormatTests.legacy(current, samples: 4, writers: true))
        #expect(version2.image.series[0].writers == [9, 9, 9, 9])
        #expect(version2.image.series[0].uuids == image.series[0].uuids)
        #expect(version2.image.series[0].arrivals == [1, 2, 3, 4])
        #expect(version2.image.series[0].changeLog == SeriesChangeLog())
        #expect(version2.image.lastAnchor == 0 && version2.sequence == 5)

        let version1 = try SnapshotCodec.decode(WriterFormatTests.legacy(current, samples: 4, writers: false))
        #expect(version1.image.series[0].writers == [0, 0, 0, 0])
        #expect(version1.image.series[0].uuids == image.series[0].uuids)
        #expect(version1.image.series[0].arrivals == [1, 2, 3, 4])
        #expect(version1.sequence == 5)

        // A restored old image answers changes from anchor 0 and hands out newer anchors after it.
        let restored = HealthStore()
        try restored.restore(version2.image)
        #expect(try restored.changes(subject: "anna", type: "stepCount", anchor: 0).added.count == 4)
        _ = try restored.insert(stepBatch(id: 2, from: 10, rows: 1), writer: 9, beforeApplying: {})
        let after = try restored.changes(subject: "anna", type: "stepCount", anchor: 4)
        #expect(after.added.count == 1 && after.anchor == 5)
        #expect(try restored.changes(subject: "anna", type: "stepCount", filter: SampleFilter(writer: 3), anchor: 0).isEmpty)
    }

    /// `current` (an HKSNAP03 file of one "stepCount" series without deletions) as version 2 or 1 wrote it: no
    /// newest anchor, no change log, no arrival column, and for version 1 no writer column; its own CRC.
    static func legacy(_ current: [UInt8], samples n: Int, writers: Bool) -> [UInt8] {
        let body = Array(current[..<(current.count - 4)])
        let sequenceEnd = 8 + 1 + "stepCount".utf8.count + 8
        let columnsStart = body.count - n * 54
        #expect(body[columnsStart - 2] == 0 && body[columnsStart - 1] == 0)
        var old = Array((writers ? "HKSNAP02" : "HKSNAP01").utf8)
        old += body[8..<sequenceEnd]
        old += body[(sequenceEnd + 8)..<(columnsStart - 2)]
        old += body[columnsStart..<(columnsStart + n * (writers ? 46 : 42))]
        let crc = Zlib.crc32(old)
        withUnsafeBytes(of: crc.littleEndian) { old.append(contentsOf: $0) }
        return old
    }
}
