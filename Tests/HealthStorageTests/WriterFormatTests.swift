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
        #expect(byIdentity.kind.rawValue == 4 && LogChange.insert(batch).kind.rawValue == 1)
        #expect(try LogChange.decode(kind: 4, payload: byIdentity.encodePayload()) == byIdentity)
        // Kind 1 bytes are exactly what hkd wrote before writers existed.
        #expect(try LogChange.insert(batch).encodePayload() == LogChange.insert(batch, writer: 0).encodePayload())
        let delete = LogChange.delete(subject: "anna", type: "stepCount", filter: SampleFilter(writer: 12))
        #expect(try LogChange.decode(kind: 2, payload: delete.encodePayload()) == delete)
        var zero = try LogChange.insert(batch).encodePayload()
        zero.insert(0, at: 2 + "anna".utf8.count + "stepCount".utf8.count)
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 4, payload: zero) }
    }

    @Test("HKSNAP05 keeps the batch table (writers, derived and sent UUIDs), anchors, deletions and the newest anchor")
    func snapshotVersion5() throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 4), writer: 9, beforeApplying: {})
        _ = try store.insert(stepBatch(id: 2, from: 10, rows: 5, derivedUUIDs: true), writer: 11, beforeApplying: {})
        let stored = try store.samples(subject: "anna", type: "stepCount").uuids
        #expect(Array(stored[4...]) == (0..<5).map { SampleBatch.derivedUUID(batchID: 2, row: $0) })
        #expect(try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [stored[0]])) == 1)
        let type = try QuantityType.named("stepCount")
        let (image, _) = store.image(of: type) { () }
        let series = image.series[0]
        #expect(series.batches.map(\.writer) == [9, 11])
        #expect(series.batches.map(\.firstAnchor) == [1, 5])
        #expect(series.batches[0].naming.listed == 4 && series.batches[1].naming == .batch)
        #expect(series.arrivals == [2, 3, 4, 5, 6, 7, 8, 9])
        #expect(series.changeLog.deletions.map(\.writer) == [9])
        #expect(image.lastAnchor == 10)
        let bytes = SnapshotCodec.encode(image, sequence: 5, layout: .rawColumns)
        #expect(Array(bytes.prefix(8)) == Array("HKSNAP06".utf8))
        let decoded = try SnapshotCodec.decode(bytes)
        #expect(decoded.image == image)
        #expect(decoded.sequence == 5)
        #expect(decoded.image.series[0].recentBatches.map(\.writer) == [9, 11])
        let restored = HealthStore()
        try restored.restore(decoded.image)
        #expect(try restored.samples(subject: "anna", type: "stepCount").uuids == Array(stored[1...]))
        #expect(try restored.samples(subject: "anna", type: "stepCount", filter: SampleFilter(writer: 11)).count == 5)
        // Batch ids stay scoped to their writer across the snapshot: writer 9's retry repeats its first
        // acknowledgement; writer 11's own batch 1 is a new batch.
        #expect(
            try restored.insert(stepBatch(id: 1, rows: 4), writer: 9, beforeApplying: {})
                == InsertResult(inserted: 4, duplicates: 0))
        #expect(
            try restored.insert(stepBatch(id: 1, from: 40, rows: 2), writer: 11, beforeApplying: {})
                == InsertResult(inserted: 2, duplicates: 0))
        #expect(try restored.samples(subject: "anna", type: "stepCount").count == 10)
    }

    @Test("HKSNAP04 (recent batches without writers) still reads; its recent batch ids match no later batch")
    func snapshotVersion4() throws {
        let store = HealthStore()
        let first = stepBatch(id: 1, rows: 4)
        _ = try store.insert(first, writer: 9, beforeApplying: {})
        var (image, _) = store.image(of: try QuantityType.named("stepCount")) { () }
        image.series[0].recentBatches = []
        // Without recent batches, version 4 and 5 bodies are the same bytes: version 6's without its metadata
        // tables (an empty one is the blob 01 00 after the series' columns).
        var bytes = SnapshotCodec.encode(image, sequence: 3, layout: .rawColumns)
        bytes.replaceSubrange(0..<8, with: Array("HKSNAP04".utf8))
        bytes.removeLast(4)
        #expect(Array(bytes.suffix(2)) == [1, 0])
        bytes.removeLast(2)
        let crc = Zlib.crc32(bytes)
        withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
        let decoded = try SnapshotCodec.decode(bytes)
        #expect(decoded.image == image)
        let restored = HealthStore()
        try restored.restore(decoded.image)
        // The retry is recognised row by row through its UUIDs.
        #expect(try restored.insert(first, writer: 9, beforeApplying: {}) == InsertResult(inserted: 0, duplicates: 4))
        #expect(try restored.samples(subject: "anna", type: "stepCount").count == 4)
    }

    @Test(
        "HKSNAP10, HKSNAP08 and HKSNAP06 keep each row's metadata (every value type); HKSNAP05, without them, still reads"
    )
    func snapshotMetadata() throws {
        let store = HealthStore()
        var batch = stepBatch(id: 1, rows: 3)
        batch.metadata = [
            ["HKTimeZone": .string("Europe/Berlin"), "n": .number(2.5)], [:],
            ["d": .date(-1), "q": .quantity(1.5, unit: "km")],
        ]
        _ = try store.insert(batch, writer: 9, beforeApplying: {})
        let type = try QuantityType.named("stepCount")
        let (image, _) = store.image(of: type) { () }
        #expect(image.series[0].metadata.count == 2)
        let bytes = SnapshotCodec.encode(image, sequence: 4)
        #expect(Array(bytes.prefix(8)) == Array("HKSNAP10".utf8))
        let decoded = try SnapshotCodec.decode(bytes)
        #expect(decoded.image == image)
        #expect(try SnapshotCodec.decode(SnapshotCodec.encode(image, sequence: 4, layout: .rawColumns)).image == image)
        let version8 = SnapshotCodec.encode(image, sequence: 4, layout: .sealedBlocksWithMetadataPerRow)
        #expect(Array(version8.prefix(8)) == Array("HKSNAP08".utf8))
        #expect(try SnapshotCodec.decode(version8).image == image)
        let restored = HealthStore()
        try restored.restore(decoded.image)
        #expect(try restored.samples(subject: "anna", type: "stepCount").metadata == batch.metadata)

        var plain = image
        plain.series[0].metadata = [:]
        var version5 = SnapshotCodec.encode(plain, sequence: 4, layout: .rawColumns)
        version5.replaceSubrange(0..<8, with: Array("HKSNAP05".utf8))
        version5.removeLast(4)
        #expect(Array(version5.suffix(2)) == [1, 0])
        version5.removeLast(2)
        let crc = Zlib.crc32(version5)
        withUnsafeBytes(of: crc.littleEndian) { version5.append(contentsOf: $0) }
        #expect(try SnapshotCodec.decode(version5).image == plain)
    }

    @Test("HKSNAP10 keeps each distinct metadata row once: repeated rows cost a few bytes a sample, not the row")
    func snapshotMetadataIsDictionaryEncoded() throws {
        let store = HealthStore()
        var batch = stepBatch(id: 1, rows: 2_000)
        batch.metadata = (0..<2_000).map { row in
            ["HKMetadataKeyHeartRateMotionContext": .number(Double(row % 3)), "HKTimeZone": .string("Europe/Berlin")]
        }
        _ = try store.insert(batch, writer: 9, beforeApplying: {})
        let (image, _) = store.image(of: try QuantityType.named("stepCount")) { () }
        let current = SnapshotCodec.encode(image, sequence: 1)
        let perRow = SnapshotCodec.encode(image, sequence: 1, layout: .sealedBlocksWithMetadataPerRow)
        // Version 8 repeats the 60-odd bytes of a row for every sample; version 9 writes two varints instead.
        #expect(perRow.count - current.count > 2_000 * 50)
        let decoded = try SnapshotCodec.decode(current).image
        #expect(decoded == image)
        let restored = HealthStore()
        try restored.restore(decoded)
        #expect(try restored.samples(subject: "anna", type: "stepCount").metadata == batch.metadata)
    }

    @Test(
        "a dictionary-encoded metadata table with a bad index, anchor, empty row or bytes left over is refused",
        arguments: [
            // One distinct row, {"a": ""}: count 1, key "a", string tag, empty string.
            ([1, 1, 1, 0x61, 0, 0, 1, 5, 1], "index 1 at byte 7 is past its 1 rows"),
            ([1, 1, 1, 0x61, 0, 0, 2, 5, 0, 0, 0], "anchor at byte 9 is not increasing"),
            ([1, 0, 0, 0, 0], "distinct row 0 at byte 1 is empty"),
            ([0, 0, 7], "1 unexpected bytes after the metadata table"),
        ] as [([UInt8], String)])
    func malformedDictionaryTable(bytes: [UInt8], message: String) throws {
        let error = #expect(throws: CodecError.self) { try MetadataTable.decodeDistinct(bytes[...]) }
        #expect(error?.message.contains(message) == true, "\(error.map { "\($0)" } ?? "")")
    }

    @Test("a batch table whose anchors overlap or miss a row is refused at restore, naming the subject")
    func brokenBatchTable() throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 4, derivedUUIDs: true), writer: 9, beforeApplying: {})
        _ = try store.insert(stepBatch(id: 2, from: 10, rows: 3), writer: 9, beforeApplying: {})
        let (image, _) = store.image(of: try QuantityType.named("stepCount")) { () }
        var overlapping = image
        overlapping.series[0].batches[1].firstAnchor = 3
        var missing = image
        missing.series[0].batches[1].count = 1
        for broken in [overlapping, missing] {
            #expect { try HealthStore().restore(broken) } throws: {
                ($0 as? HealthError)?.code == .internalError && "\($0)".contains("\"anna\"")
            }
        }
    }

    @Test("HKSNAP03, HKSNAP02 and HKSNAP01 (UUID and writer columns) still read into a compact batch table")
    func olderSnapshots() throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 4), writer: 9, beforeApplying: {})
        _ = try store.insert(stepBatch(id: 7, from: 10, rows: 5, derivedUUIDs: true), writer: 9, beforeApplying: {})
        let uuids = try store.samples(subject: "anna", type: "stepCount").uuids
        let type = try QuantityType.named("stepCount")
        let (image, _) = store.image(of: type) { () }
        let version3Bytes = WriterFormatTests.version3(image, uuids: uuids, writers: [9, 9, 9, 9, 9, 9, 9, 9, 9])

        let version3 = try SnapshotCodec.decode(version3Bytes)
        // The derived UUIDs of batch 7 fold back into one entry; the sent ones are kept explicitly.
        #expect(version3.image.series[0].batches.filter { $0.naming == .batch }.map(\.batchID) == [7])
        #expect(version3.image.series[0].arrivals == image.series[0].arrivals)
        #expect(version3.image.lastAnchor == image.lastAnchor)

        let version2 = try SnapshotCodec.decode(WriterFormatTests.legacy(version3Bytes, samples: 9, writers: true))
        #expect(version2.image.series[0].arrivals == [1, 2, 3, 4, 5, 6, 7, 8, 9])
        #expect(version2.image.series[0].changeLog == SeriesChangeLog())
        #expect(version2.image.lastAnchor == 0 && version2.sequence == 5)

        let version1 = try SnapshotCodec.decode(WriterFormatTests.legacy(version3Bytes, samples: 9, writers: false))
        #expect(version1.image.series[0].batches.allSatisfy { $0.writer == 0 })
        #expect(version1.sequence == 5)

        for old in [version3, version2] {
            let restored = HealthStore()
            try restored.restore(old.image)
            #expect(try restored.samples(subject: "anna", type: "stepCount").uuids == uuids)
            #expect(
                try restored.samples(subject: "anna", type: "stepCount", filter: SampleFilter(writer: 9)).count == 9)
            // The same samples sent again under a new batch id, with their UUIDs (the sent ones of batch 1 and
            // the derived ones of batch 7), add nothing: both kinds of UUID are still known.
            let all = try restored.samples(subject: "anna", type: "stepCount")
            var again = SampleBatch(batchID: 99, subject: "anna", typeIdentifier: "stepCount", unit: "count")
            for row in 0..<all.count {
                again.append(
                    start: all.starts[row], end: all.ends[row], value: all.values[row], source: watch,
                    uuid: all.uuids[row])
            }
            #expect(try restored.insert(again) == InsertResult(inserted: 0, duplicates: 9))
        }
        // A restored old image answers changes from anchor 0 and hands out newer anchors after it.
        let restored = HealthStore()
        try restored.restore(version2.image)
        #expect(try restored.changes(subject: "anna", type: "stepCount", anchor: 0).added.count == 9)
        _ = try restored.insert(stepBatch(id: 2, from: 20, rows: 1), writer: 9, beforeApplying: {})
        let after = try restored.changes(subject: "anna", type: "stepCount", anchor: 9)
        #expect(after.added.count == 1 && after.anchor == 10)
        #expect(
            try restored.changes(subject: "anna", type: "stepCount", filter: SampleFilter(writer: 3), anchor: 0)
                .isEmpty)
    }

    @Test("per-row UUID and writer columns fold into a few entries, sent UUIDs kept row for row")
    func legacyColumnsFold() throws {
        let n = 20_000
        let uuids = ContiguousArray(
            (0..<n).map { row -> UUID in
                // Rows 0..<10,000 sent with their batch; then two derived runs of batch 42 and 43.
                row < 10_000
                    ? UUID() : SampleBatch.derivedUUID(batchID: row < 15_000 ? 42 : 43, row: UInt32(row % 5_000))
            })
        let writers = ContiguousArray((0..<n).map { UInt32($0 < 12_000 ? 7 : 8) })
        let image = try SeriesImage(
            subject: "anna", starts: ContiguousArray((0..<n).map { Int64($0) * Micros.minute }),
            ends: ContiguousArray((0..<n).map { Int64($0 + 1) * Micros.minute }),
            values: ContiguousArray(repeating: 1, count: n), sourceIDs: ContiguousArray(repeating: 0, count: n),
            uuids: uuids, writers: writers, arrivals: nil, maxDuration: Micros.minute, sources: [watch],
            userEnteredSources: [false], priorityOrder: nil, recentBatches: [], syncHolders: [])
        // One explicit entry, then batch 42 split by the writer change, then batch 43.
        #expect(image.batches.map(\.count) == [10_000, 2_000, 3_000, 5_000])
        #expect(image.batches.map { $0.naming == .batch } == [false, true, true, true])
        let store = HealthStore()
        try store.restore(ShardImage(type: try QuantityType.named("stepCount"), series: [image]))
        #expect(try store.samples(subject: "anna", type: "stepCount").uuids == Array(uuids))
        #expect(try store.samples(subject: "anna", type: "stepCount", filter: SampleFilter(writer: 8)).count == 8_000)
    }

    /// `image` (one "stepCount" series without deletions) as version 3 wrote it: per-row UUID, writer and
    /// anchor columns instead of the batch table.
    static func version3(_ image: ShardImage, uuids: [UUID], writers: [UInt32]) -> [UInt8] {
        var tableless = image
        tableless.series[0].batches = []
        // Recent batches have no writer before version 5; these files hold none.
        tableless.series[0].recentBatches = []
        let current = SnapshotCodec.encode(tableless, sequence: 5, layout: .rawColumns)
        let series = image.series[0]
        let n = series.count
        // The version 6 body ends with the batch count (one byte: 0), 34 column bytes per sample and an empty
        // metadata table (two bytes).
        var old = Array("HKSNAP03".utf8) + current[8..<(current.count - 4 - 2 - n * 34 - 1)]
        func raw<T>(_ column: [T]) { column.withUnsafeBytes { old += $0 } }
        raw(Array(series.starts))
        raw(Array(series.ends))
        raw(Array(series.values))
        raw(Array(series.sourceIDs))
        raw(uuids)
        raw(writers)
        raw(Array(series.arrivals))
        let crc = Zlib.crc32(old)
        withUnsafeBytes(of: crc.littleEndian) { old.append(contentsOf: $0) }
        return old
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
