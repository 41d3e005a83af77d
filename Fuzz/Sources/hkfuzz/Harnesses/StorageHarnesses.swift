import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthStorage

/// Write-ahead log records and segments, shard snapshots and the snapshot manifest.
enum StorageHarnesses {
    /// One change of each record kind, for seeds.
    static let changes: [LogChange] = [
        .insert(SeedData.batch()),
        .insert(SeedData.batch(id: 8, rows: 2, uuids: false, metadata: false), writer: 3),
        .delete(
            subject: "anna", type: "stepCount",
            filter: SampleFilter(
                date: DatePredicate(start: -5, end: 99, strictStartDate: true), sources: ["Watch", "x"],
                uuids: [UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))])),
        .delete(subject: "ben", type: "heartRate", filter: .all),
        .sourcePriority(
            subject: "ben", type: "stepCount", order: [SourceInfo(name: "Watch"), SourceInfo(name: "Phone")]),
        .workouts(subject: "anna", WorkoutHarnesses.workouts, writer: 4),
        .workoutDelete(subject: "anna", uuids: [WorkoutHarnesses.workouts[0].uuid], writer: 4),
        .characteristics(subject: "anna", ProfileHarnesses.entries),
        .activitySummaries(subject: "anna", ProfileHarnesses.summaries),
        .correlations(subject: "anna", CorrelationHarnesses.correlations, writer: 4),
        .correlationDelete(subject: "anna", uuids: [CorrelationHarnesses.correlations[0].uuid], writer: nil),
        .routes(subject: "anna", RouteHarnesses.routes, writer: 4),
    ]

    /// Checks a record payload: if it decodes, it is of the kind it was read as, and its encoding decodes to a
    /// change with the same encoding.
    static func checkRecord(kind: UInt8, payload: [UInt8]) {
        guard let change = attempt({ try LogChange.decode(kind: kind, payload: payload) }) else { return }
        require(change.kind.rawValue == kind, "a kind \(kind) record decoded as kind \(change.kind)")
        guard let encoded = attempt({ try change.encodePayload() }),
            let again = attempt({ try LogChange.decode(kind: change.kind.rawValue, payload: encoded) })
        else {
            require(false, "a decoded kind \(kind) record does not re-encode and decode")
            return
        }
        require(attempt({ try again.encodePayload() }) == encoded, "kind \(kind): decode(encode(change)) differs")
    }

    /// Byte 0 is the record kind; the rest its payload.
    static let logRecord = Harness(
        "log-record", "LogChange.decode of a record payload (kind from byte 0); round trip",
        seeds: { changes.map { [$0.kind.rawValue] + (try! $0.encodePayload()) } }
    ) { input in
        let kind = input.byte() % 8
        checkRecord(kind: kind, payload: input.rest())
    }

    /// Rewrites the CRC of every record a scan would reach, so mutations get past the checksums.
    static func fixChecksums(_ bytes: inout [UInt8]) {
        var offset = LogFraming.headerSize
        while bytes.count - offset >= LogFraming.recordHeaderSize {
            let length =
                Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16
                | Int(bytes[offset + 3]) << 24
            let end = offset + LogFraming.recordHeaderSize + length
            guard end <= bytes.count else { return }
            let crc = bytes.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[(offset + 8)..<end])) }
            for i in 0..<4 { bytes[offset + 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
            offset = end
        }
    }

    /// Byte 0 bit 0 asks for checksums to be fixed first; the rest is a segment. The scan's records must be
    /// exactly the bytes before its damage (re-framing each gives its bytes back), in sequence, and each record
    /// payload goes through ``checkRecord(kind:payload:)``.
    static let logSegment = Harness(
        "log-segment", "LogFraming.scan of a segment (CRCs fixed when byte 0 is odd), records re-framed",
        seeds: {
            var segment = LogFraming.segmentHeader(firstSequence: 5)
            for (i, change) in changes.enumerated() {
                segment += LogFraming.record(
                    kind: change.kind.rawValue, sequence: 5 + UInt64(i), payload: try! change.encodePayload())
            }
            return [[1] + segment, [0] + segment + [0, 0, 0]]
        }
    ) { input in
        let control = input.byte()
        var bytes = input.rest()
        if control & 1 != 0 { fixChecksums(&bytes) }
        let scan = LogFraming.scan(bytes)
        var offset = LogFraming.headerSize
        for (index, record) in scan.records.enumerated() {
            require(record.offset == offset, "record \(index) at \(record.offset), expected \(offset)")
            require(record.sequence == scan.firstSequence &+ UInt64(index), "record \(index) out of sequence")
            let framed = LogFraming.record(kind: record.kind, sequence: record.sequence, payload: record.payload)
            require(Array(bytes[offset..<offset + framed.count]) == framed, "record \(index) re-frames differently")
            offset += framed.count
            checkRecord(kind: record.kind, payload: record.payload)
        }
        switch scan.damage {
        case nil: require(offset == bytes.count, "a clean scan stopped at \(offset) of \(bytes.count)")
        case .some(let damage):
            require(
                damage.offset == (scan.records.isEmpty && bytes.count < LogFraming.headerSize ? 0 : offset)
                    || (damage.offset == 0 && scan.records.isEmpty),
                "damage at \(damage.offset), records end at \(offset)")
        }
    }

    /// `bytes` with its CRC-32 appended, as snapshot and manifest files end.
    static func withChecksum(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        withUnsafeBytes(of: Zlib.crc32(bytes).littleEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// Encoded snapshots of a small store (two subjects, a deletion, a priority order), for seeds.
    static func snapshotSeeds() -> [[UInt8]] {
        let store = HealthStore()
        _ = try? store.insert(SeedData.batch(id: 1, rows: 4))
        var ben = SeedData.batch(id: 2, rows: 3, uuids: false, metadata: false)
        ben.subject = "ben"
        _ = try? store.insert(ben)
        let type = try! QuantityType.named("stepCount")
        // Rows named by their content identity (naming 2 in the batch table), as `hkq insert` sends them.
        var cara = SeedData.batch(id: 3, rows: 3, uuids: false, metadata: false)
        cara.subject = "cara"
        let unit = try! type.unit(parsing: cara.unit)
        cara.uuids = (0..<cara.count).map { row in
            try! Sample.stableID(
                type: type, start: cara.starts[row], end: cara.ends[row], value: cara.values[row], unit: unit,
                source: cara.sources[Int(cara.sourceIndices[row])])
        }
        _ = try? store.insert(cara)
        let (image, sequence) = store.image(of: type) { UInt64(9) }
        let empty = HealthStore().image(of: type) { UInt64(0) }
        return [SnapshotCodec.encode(image, sequence: sequence), SnapshotCodec.encode(empty.0, sequence: empty.1)]
    }

    /// Byte 0 bit 0 asks for the trailing CRC to be computed (the rest is the file without it); otherwise the
    /// rest is the whole file. A decoded image must re-encode to a file that decodes and encodes the same, and
    /// restoring it into a store must not trap (the store checks it as recovery does).
    static let snapshot = Harness(
        "snapshot", "SnapshotCodec.decode (CRC fixed when byte 0 is odd), re-encode, restore into a store",
        seeds: { snapshotSeeds().flatMap { [[0] + $0, [1] + $0.dropLast(4)] } }
    ) { input in
        let control = input.byte()
        let bytes = control & 1 != 0 ? withChecksum(input.rest()) : input.rest()
        guard let decoded = attempt({ try SnapshotCodec.decode(bytes) }) else { return }
        let encoded = SnapshotCodec.encode(decoded.image, sequence: decoded.sequence)
        let again: SnapshotCodec.Decoded
        do { again = try SnapshotCodec.decode(encoded) } catch {
            require(false, "a decoded snapshot re-encodes to a file that does not decode: \(error)")
            return
        }
        require(SnapshotCodec.encode(again.image, sequence: again.sequence) == encoded, "snapshot round trip differs")
        attempt { try HealthStore().restore(decoded.image) }
    }

    /// Byte 0 bit 0 asks for the trailing CRC to be computed; the rest is a manifest. A decoded manifest must
    /// encode to one that decodes to it.
    static let manifest = Harness(
        "manifest", "SnapshotManifest.decode (CRC fixed when byte 0 is odd); round trip",
        seeds: {
            let manifest = SnapshotManifest(
                generation: 3,
                entries: [
                    .init(type: "stepCount", file: "stepCount-3.snap", sequence: 17, size: 4096, crc: 0xDEAD_BEEF),
                    .init(type: "heartRate", file: "", sequence: 0, size: 0, crc: 0),
                ])
            let bytes = manifest.encode()
            return [[0] + bytes, [1] + bytes.dropLast(4)]
        }
    ) { input in
        let control = input.byte()
        let bytes = control & 1 != 0 ? withChecksum(input.rest()) : input.rest()
        guard let manifest = attempt({ try SnapshotManifest.decode(bytes) }) else { return }
        require(attempt({ try SnapshotManifest.decode(manifest.encode()) }) == manifest, "manifest round trip differs")
    }
}
