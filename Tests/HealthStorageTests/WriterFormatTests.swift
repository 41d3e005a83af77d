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

    @Test("snapshots keep the writer column; an HKSNAP01 file reads with writer 0 everywhere")
    func snapshots() throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 4), writer: 9, beforeApplying: {})
        let type = try QuantityType.named("stepCount")
        let (image, _) = store.image(of: type) { () }
        #expect(image.series[0].writers == [9, 9, 9, 9])
        let current = SnapshotCodec.encode(image, sequence: 5)
        #expect(try SnapshotCodec.decode(current).image == image)

        // The same file as the previous version wrote it: old magic, no writer column, its own CRC.
        var old = Array("HKSNAP01".utf8) + current[8..<(current.count - 4 - 4 * 4)]
        let crc = Zlib.crc32(old)
        withUnsafeBytes(of: crc.littleEndian) { old.append(contentsOf: $0) }
        let decoded = try SnapshotCodec.decode(old)
        #expect(decoded.image.series[0].writers == [0, 0, 0, 0])
        #expect(decoded.image.series[0].uuids == image.series[0].uuids)
        #expect(decoded.sequence == 5)
    }
}
