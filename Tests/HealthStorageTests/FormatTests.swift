import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import Testing

@testable import HealthStorage

/// The pure formats: records, segments, snapshots, manifests.
struct FormatTests {
    @Test("every change kind round-trips through its record payload")
    func recordRoundTrip() throws {
        var batch = stepBatch(id: 9, rows: 3)
        batch.metadata = [[MetadataKey.syncIdentifier: .string("a"), MetadataKey.syncVersion: .number(2)], [:], [:]]
        let changes: [LogChange] = [
            .insert(batch),
            .delete(
                subject: "anna", type: "stepCount",
                filter: SampleFilter(
                    date: DatePredicate(start: -5, end: 99, strictStartDate: true), sources: ["Watch", "x"],
                    uuids: [UUID(), UUID()])),
            .delete(subject: "anna", type: "heartRate", filter: .all),
            .sourcePriority(subject: "ben", type: "stepCount", order: [watch, SourceInfo(name: "Phone")]),
        ]
        for change in changes {
            #expect(try LogChange.decode(kind: change.kind.rawValue, payload: change.encodePayload()) == change)
        }
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 9, payload: changes[2].encodePayload()) }
        #expect(throws: CodecError.self) {
            try LogChange.decode(kind: 1, payload: Array(changes[0].encodePayload().dropLast()))
        }
    }

    static func segment(_ count: Int) -> [UInt8] {
        var bytes = LogFraming.segmentHeader(firstSequence: 5)
        for i in 0..<count {
            bytes += LogFraming.record(kind: 2, sequence: 5 + UInt64(i), payload: Array(repeating: UInt8(i), count: 40))
        }
        return bytes
    }

    @Test("a clean segment scans to its records in order")
    func cleanScan() {
        let scan = LogFraming.scan(Self.segment(3))
        #expect(scan.damage == nil)
        #expect(scan.firstSequence == 5)
        #expect(scan.records.map(\.sequence) == [5, 6, 7])
        #expect(scan.records[1].payload == Array(repeating: 1, count: 40))
    }

    @Test("a record cut anywhere at the end is a torn tail at its start", arguments: [1, 10, 17, 30, 56])
    func tornTail(cut: Int) {
        let bytes = Self.segment(3)
        let scan = LogFraming.scan(Array(bytes.dropLast(cut)))
        #expect(scan.records.count == 2)
        #expect(scan.damage == .tornTail(offset: 16 + 2 * 57))
    }

    @Test("a flipped byte in the last record is torn, in an earlier one corrupt")
    func flippedBytes() {
        var bytes = Self.segment(3)
        bytes[bytes.count - 3] ^= 1
        #expect(LogFraming.scan(bytes).damage == .tornTail(offset: 16 + 2 * 57))
        bytes = Self.segment(3)
        bytes[16 + 57 + 20] ^= 1
        let scan = LogFraming.scan(bytes)
        #expect(scan.records.count == 1)
        #expect(scan.damage?.offset == 16 + 57)
        if case .corrupt = scan.damage {
        } else {
            Issue.record("expected corruption, got \(String(describing: scan.damage))")
        }
        bytes = Self.segment(3)
        bytes[16 + 57] = 0xFF  // an absurd length mid-segment
        bytes[16 + 57 + 3] = 0x7F
        if case .corrupt = LogFraming.scan(bytes).damage {} else { Issue.record("an absurd length must be corruption") }
    }

    @Test("snapshots round-trip and refuse any flipped byte", arguments: [0, 9, 40, -5, -1])
    func snapshotCodec(flip: Int) throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 50))
        _ = try store.insert(stepBatch(id: 2, subject: "ben", rows: 5))
        let (image, sequence) = store.image(of: try QuantityType.named("stepCount")) { UInt64(77) }
        var bytes = SnapshotCodec.encode(image, sequence: sequence)
        let decoded = try SnapshotCodec.decode(bytes)
        #expect(decoded.image == image)
        #expect(decoded.sequence == 77)
        bytes[flip >= 0 ? flip : bytes.count + flip] ^= 0x10
        #expect(throws: CodecError.self) { try SnapshotCodec.decode(bytes) }
        #expect(throws: CodecError.self) { try SnapshotCodec.decode(Array(bytes.prefix(30))) }
    }

    @Test("a snapshot streamed in pieces is the same file: tables in bounded pieces, columns straight from memory")
    func streamedSnapshot() throws {
        let store = HealthStore()
        // Many small batches with sent UUIDs make a batch table larger than one piece.
        for id in 1...400 { _ = try store.insert(stepBatch(id: UInt64(id), from: id * 20, rows: 20)) }
        _ = try store.insert(stepBatch(id: 999, subject: "ben", rows: 30, derivedUUIDs: true))
        let (image, sequence) = store.image(of: try QuantityType.named("stepCount")) { UInt64(12) }
        // Version 6 streams every column straight from memory; version 7 gathers its blocks into pieces.
        for layout in [SnapshotCodec.RowLayout.rawColumns, .sealedBlocks] {
            let whole = SnapshotCodec.encode(image, sequence: sequence, layout: layout)
            var pieces: [[UInt8]] = []
            let (crc, size) = SnapshotCodec.encode(image, sequence: sequence, layout: layout) {
                (piece: UnsafeRawBufferPointer) throws(Never) in
                pieces.append(Array(piece))
            }
            #expect(pieces.joined().elementsEqual(whole))
            #expect(size == whole.count)
            #expect(crc == SnapshotFiles.trailer(whole))
            #expect(pieces.count > (layout == .rawColumns ? 10 : 1))
            #expect(pieces.allSatisfy { $0.count <= 2 * SnapshotCodec.pieceSize || $0.count % 8 == 0 })
            #expect(try SnapshotCodec.decode(whole).image == image)
        }
    }

    @Test("the manifest round-trips and refuses damage")
    func manifest() throws {
        let manifest = SnapshotManifest(
            generation: 3,
            entries: [
                .init(type: "stepCount", file: "stepCount-3.snap", sequence: 10, size: 500, crc: 0xDEAD_BEEF),
                .init(type: "heartRate", file: "", sequence: 10, size: 0, crc: 0),
            ])
        var bytes = manifest.encode()
        #expect(try SnapshotManifest.decode(bytes) == manifest)
        bytes[12] ^= 1
        #expect(throws: CodecError.self) { try SnapshotManifest.decode(bytes) }
    }
}
