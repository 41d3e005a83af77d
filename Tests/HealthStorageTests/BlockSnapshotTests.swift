import Foundation
import HealthCodec
import HealthModel
import HealthPosix
import Testing

@testable import HealthEngine
@testable import HealthStorage

/// Version 6 snapshots: the rows of each series as sealed blocks, each with its own CRC-32.
struct BlockSnapshotTests {
    /// A store with two subjects, several blocks' worth of rows, a late batch, a deletion and derived UUIDs.
    private func image() throws -> ShardImage {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 9_000, derivedUUIDs: true), writer: 3, beforeApplying: {})
        _ = try store.insert(stepBatch(id: 2, from: 20_000, rows: 1), writer: 3, beforeApplying: {})
        _ = try store.insert(stepBatch(id: 3, from: 4_000, rows: 50), writer: 4, beforeApplying: {})
        _ = try store.insert(stepBatch(id: 4, subject: "ben", rows: 3), beforeApplying: {})
        _ = try store.delete(
            subject: "anna", type: "stepCount",
            filter: SampleFilter(date: DatePredicate(start: 100 * Micros.minute, end: 200 * Micros.minute)))
        return store.image(of: try QuantityType.named("stepCount")) { () }.0
    }

    @Test("HKSNAP10 round-trips the image and restores the same samples; HKSNAP06 of it reads the same")
    func roundTrip() throws {
        let image = try image()
        #expect(image.series[0].count > 2 * SnapshotCodec.blockRows)
        let bytes = SnapshotCodec.encode(image, sequence: 8)
        #expect(Array(bytes.prefix(8)) == Array("HKSNAP10".utf8))
        let decoded = try SnapshotCodec.decode(bytes)
        #expect(decoded.image == image)
        #expect(decoded.sequence == 8)
        let raw = try SnapshotCodec.decode(SnapshotCodec.encode(image, sequence: 8, layout: .rawColumns))
        #expect(raw.image == decoded.image)
        let restored = HealthStore()
        try restored.restore(decoded.image)
        let original = HealthStore()
        try original.restore(image)
        #expect(
            try restored.samples(subject: "anna", type: "stepCount").uuids
                == original.samples(subject: "anna", type: "stepCount").uuids)
        #expect(try restored.samples(subject: "ben", type: "stepCount").count == 3)
    }

    @Test("blocks mixing sources as hkd sealed them before laned blocks (version 1) load laned, with the same rows")
    func olderMixedBlocks() throws {
        // A watch counting every minute and a phone every other one, interleaved row by row.
        let phone = SourceInfo(name: "Phone", bundleIdentifier: "com.apple.health.phone")
        var batch = SampleBatch(batchID: 1, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for minute in 0..<9_000 {
            let start = Int64(minute) * Micros.minute
            batch.append(start: start, end: start + Micros.minute, value: Double(minute % 7), source: watch, uuid: nil)
            if minute % 2 == 0 {
                batch.append(
                    start: start, end: start + 2 * Micros.minute, value: 3, source: phone, uuid: nil)
            }
        }
        let store = HealthStore()
        _ = try store.insert(batch, beforeApplying: {})
        var image = store.image(of: try QuantityType.named("stepCount")) { () }.0
        #expect(image.series[0].blocks.contains { !$0.lanes.isEmpty })
        // Every block written as before: version 1, one column each, whatever its sources.
        image.series[0].blocks = image.series[0].blocks.map { block in
            let scratch = BlockScratch(capacity: block.count)
            block.decode(into: scratch.all)
            return SealedBlock(columnsOf: scratch.rows(block.count), summary: block.summary)
        }
        #expect(image.series[0].blocks.allSatisfy { $0.bytes.first == SealedBlock.version })
        let decoded = try SnapshotCodec.decode(SnapshotCodec.encode(image, sequence: 5))
        let blocks = decoded.image.series[0].blocks
        #expect(blocks.count == image.series[0].blocks.count)
        #expect(blocks.allSatisfy { $0.summary.isSingleSource || $0.bytes.first == SealedBlock.lanedVersion })
        #expect(blocks.contains { $0.bytes.first == SealedBlock.lanedVersion })
        // The same rows, and the next snapshot writes the laned blocks as they are.
        let restored = HealthStore()
        try restored.restore(decoded.image)
        #expect(
            try restored.samples(subject: "anna", type: "stepCount")
                == store.samples(subject: "anna", type: "stepCount"))
        let daily = { (store: HealthStore) in
            try store.collection(
                subject: "anna", type: "stepCount", options: [.cumulativeSum, .separateBySource], anchor: 0,
                interval: CalendarInterval(1, .hour), timeZone: "UTC")
        }
        #expect(try daily(restored) == daily(store))
        let again = try SnapshotCodec.decode(SnapshotCodec.encode(decoded.image, sequence: 6))
        #expect(again.image == decoded.image)
    }

    @Test("per-minute steps from one batch take under 1 byte a sample on disk")
    func compact() throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 100_000, derivedUUIDs: true), beforeApplying: {})
        let image = store.image(of: try QuantityType.named("stepCount")) { () }.0
        let bytes = SnapshotCodec.encode(image, sequence: 1)
        #expect(Double(bytes.count) / 100_000 < 1, "\(bytes.count) bytes")
        #expect(try SnapshotCodec.decode(bytes).image == image)
    }

    @Test("blocks larger than a piece stream in pieces: the same file as in one array, and it decodes")
    func streamed() throws {
        let store = HealthStore()
        var batch = SampleBatch(batchID: 1, subject: "anna", typeIdentifier: "bodyMass", unit: "kg")
        for i in 0..<30_000 {
            let start = Int64(i) * Micros.minute
            batch.append(start: start, end: start, value: 50 + Double(i).squareRoot(), source: watch, uuid: nil)
        }
        _ = try store.insert(batch, beforeApplying: {})
        let (image, _) = store.image(of: try QuantityType.named("bodyMass")) { () }
        let whole = SnapshotCodec.encode(image, sequence: 2)
        #expect(whole.count > 2 * SnapshotCodec.pieceSize)
        var pieces: [[UInt8]] = []
        SnapshotCodec.encode(image, sequence: 2) { (piece: UnsafeRawBufferPointer) throws(Never) in
            pieces.append(Array(piece))
        }
        #expect(pieces.count > 2)
        #expect(pieces.joined().elementsEqual(whole))
        #expect(try SnapshotCodec.decode(whole).image == image)
    }

    @Test("a damaged block is refused by its own checksum even when the file's checksum is made to fit")
    func damagedBlock() throws {
        let image = try image()
        var bytes = SnapshotCodec.encode(image, sequence: 8)
        let series = image.series[0]
        let blockRange = try #require(bytes.firstRange(of: series.blocks[0].bytes))
        bytes[blockRange.lowerBound + blockRange.count / 2] ^= 0x40
        bytes.removeLast(4)
        withUnsafeBytes(of: Zlib.crc32(bytes).littleEndian) { bytes.append(contentsOf: $0) }
        #expect { try SnapshotCodec.decode(bytes) } throws: { "\($0)".contains("fails its checksum") }
    }

    @Test("rows that break the engine's rules are refused when their block is read, naming it; an image is at restore")
    func rowsChecked() throws {
        var image = try image()
        var starts = image.series[1].starts
        var ends = image.series[1].ends
        starts.swapAt(0, 2)
        ends.swapAt(0, 2)
        image.series[1] = image.series[1].replacingRows(starts: starts, ends: ends)
        #expect {
            try SnapshotCodec.decode(SnapshotCodec.encode(image, sequence: 1))
        } throws: {
            "\($0)".contains("block 0 of series \"ben\"") && "\($0)".contains("row 1 starts before the row above")
        }
        // Restoring checks an image that was not read from a file (its rows unchecked) row by row.
        #expect(!image.series[1].rowsChecked)
        #expect(throws: (any Error).self) { try HealthStore().restore(image) }
        // And one read from a file that says its rows were checked, for what a block does not show: anchors.
        var decoded = try SnapshotCodec.decode(SnapshotCodec.encode(try self.image(), sequence: 1)).image
        #expect(decoded.series[1].rowsChecked)
        decoded.series[1].batches = []
        #expect { try HealthStore().restore(decoded) } throws: { "\($0)".contains("of no batch") }
    }

    @Test("an HKSNAP07 file, whose manual flags an earlier version left at 0, ranks manual entries first")
    func earlierManualFlags() throws {
        let store = HealthStore()
        // anna: the manual row lies in a block of several sources (laned); ben: in a block of Health's rows only.
        _ = try store.insert(manualBatch(1, "anna", (0..<9_000).map { ($0, exportPhone, false) }), beforeApplying: {})
        _ = try store.insert(manualBatch(2, "anna", (5_000..<5_010).map { ($0, connect, false) }), beforeApplying: {})
        _ = try store.insert(manualBatch(3, "anna", [(100, health, true)]), beforeApplying: {})
        _ = try store.insert(
            manualBatch(4, "ben", (0..<5_000).map { ($0, health, $0 == 10) }), beforeApplying: {})
        _ = try store.insert(manualBatch(5, "ben", (6_000..<6_010).map { ($0, connect, false) }), beforeApplying: {})
        let type = try QuantityType.named("stepCount")
        var image = store.image(of: type) { () }.0
        #expect(image.series.map { $0.userEnteredSources.filter { $0 }.count } == [1, 1])
        for index in image.series.indices {
            image.series[index].userEnteredSources = image.series[index].userEnteredSources.map { _ in false }
        }
        func order(_ file: [UInt8]) throws -> [[String]] {
            let restored = HealthStore()
            try restored.restore(try SnapshotCodec.decode(file).image)
            return try ["anna", "ben"].map { try restored.sourcePriority(subject: $0, type: "stepCount").map(\.name) }
        }
        let file = SnapshotCodec.encode(image, sequence: 1, layout: .sealedBlocksWithMetadataPerRow)
        let decoded = try SnapshotCodec.decode(version7(file)).image
        #expect(decoded.series.allSatisfy { $0.rowsChecked && $0.userEnteredFromMetadata })
        #expect(decoded.series[0].blocks.first?.summary.sources.count == 2)
        #expect(decoded.series[1].blocks.first?.summary.sources.count == 1)
        #expect(try order(version7(file)) == [["Health", "Anna’s iPhone", "Connect"], ["Health", "Connect"]])
        // A version 8 (or 9) file's flags are taken as they are: its table is not read for them.
        #expect(try order(file) == [["Anna’s iPhone", "Health", "Connect"], ["Connect", "Health"]])
        // Once restored from version 7, the next snapshot writes the flags.
        let restored = HealthStore()
        try restored.restore(decoded)
        #expect(
            restored.image(of: type) { () }.0.series.map { $0.userEnteredSources.filter { $0 }.count } == [1, 1])
    }
}

/// A data directory whose snapshot an earlier version wrote (`HKSNAP06`, raw columns; `HKSNAP07`, manual flags
/// without `HKWasUserEntered`) starts as it did, and its next snapshot is written as `HKSNAP10`.
struct SnapshotUpgradeTests {
    @Test("a version 6 snapshot in a data directory loads; the next snapshot is version 10 and loads the same")
    func upgrade() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        for id in 1...3 { _ = try durable.insert(stepBatch(id: UInt64(id), from: id * 5_000, rows: 5_000)) }
        _ = try #require(try durable.snapshot())
        _ = try durable.insert(stepBatch(id: 4, from: 100, rows: 7))
        let expected = try steps(durable.store)
        durable.close(snapshot: false)

        // Rewrite the snapshot as version 6 wrote it, with its manifest entry to match.
        let files = SnapshotFiles(directory: directory + "/snapshots")
        var manifest = try #require(try files.readManifest())
        let index = try #require(manifest.entries.firstIndex { $0.type == "stepCount" })
        let path = files.directory + "/" + manifest.entries[index].file
        let decoded = try SnapshotCodec.decode(try FileSystem.readFile(path))
        #expect(Array(try FileSystem.readFile(path).prefix(8)) == Array("HKSNAP10".utf8))
        let old = SnapshotCodec.encode(decoded.image, sequence: decoded.sequence, layout: .rawColumns)
        try FileSystem.writeFileAtomically(path, old)
        manifest.entries[index].size = UInt64(old.count)
        manifest.entries[index].crc = SnapshotFiles.trailer(old)
        try FileSystem.writeFileAtomically(files.manifestPath, manifest.encode())

        let (reopened, _) = try openStore(directory)
        #expect(try steps(reopened.store) == expected)
        _ = try #require(try reopened.snapshot())
        reopened.close(snapshot: false)
        let newest = try #require(try files.readManifest()).entries.first { $0.type == "stepCount" }
        let bytes = try FileSystem.readFile(files.directory + "/" + (try #require(newest)).file)
        #expect(Array(bytes.prefix(8)) == Array("HKSNAP10".utf8))
        let (again, _) = try openStore(directory)
        defer { again.close() }
        #expect(try steps(again.store) == expected)
    }

    @Test("a version 7 snapshot without manual flags ranks manual entries first, as the log does; then version 10")
    func manualFlagsUpgrade() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        for subject in ["anna", "ben"] {
            _ = try durable.insert(manualBatch(1, subject, [(0, exportPhone, false), (1, exportPhone, false)]))
            _ = try durable.insert(manualBatch(2, subject, [(1, connect, false)]))
        }
        // anna's manual entry goes into the snapshot, ben's only into the log after it.
        _ = try durable.insert(manualBatch(3, "anna", [(0, health, true)]))
        _ = try #require(try durable.snapshot())
        _ = try durable.insert(manualBatch(3, "ben", [(0, health, true)]))
        durable.close(snapshot: false)

        // Rewrite the snapshot as an earlier version wrote it: version 7, no source entered by hand.
        let files = SnapshotFiles(directory: directory + "/snapshots")
        var manifest = try #require(try files.readManifest())
        let index = try #require(manifest.entries.firstIndex { $0.type == "stepCount" })
        let path = files.directory + "/" + manifest.entries[index].file
        var decoded = try SnapshotCodec.decode(try FileSystem.readFile(path))
        #expect(decoded.image.series.map(\.subject) == ["anna", "ben"])
        #expect(decoded.image.series[0].userEnteredSources.contains(true))
        decoded.image.series[0].userEnteredSources = decoded.image.series[0].userEnteredSources.map { _ in false }
        let old = version7(
            SnapshotCodec.encode(decoded.image, sequence: decoded.sequence, layout: .sealedBlocksWithMetadataPerRow))
        try FileSystem.writeFileAtomically(path, old)
        manifest.entries[index].size = UInt64(old.count)
        manifest.entries[index].crc = SnapshotFiles.trailer(old)
        try FileSystem.writeFileAtomically(files.manifestPath, manifest.encode())

        func expectManualFirst(_ store: HealthStore) throws {
            for subject in ["anna", "ben"] {
                #expect(
                    try store.sourcePriority(subject: subject, type: "stepCount").map(\.name)
                        == ["Health", "Anna’s iPhone", "Connect"], "\(subject)")
                // 0–1 min the manual 10 over the iPhone's, 1–2 min the iPhone's over Garmin's.
                #expect(
                    try store.statistics(subject: subject, type: "stepCount", options: .cumulativeSum).figures.sum
                        == 20)
            }
        }
        let (reopened, _) = try openStore(directory)
        try expectManualFirst(reopened.store)
        _ = try #require(try reopened.snapshot())
        reopened.close(snapshot: false)
        let newest = try #require(try files.readManifest()?.entries.first { $0.type == "stepCount" })
        let bytes = try FileSystem.readFile(files.directory + "/" + newest.file)
        #expect(Array(bytes.prefix(8)) == Array("HKSNAP10".utf8))
        #expect(try SnapshotCodec.decode(bytes).image.series.allSatisfy { $0.userEnteredSources.contains(true) })
        let (again, _) = try openStore(directory)
        defer { again.close() }
        try expectManualFirst(again.store)
    }
}
