import Foundation
import HealthCodec
import HealthModel
import HealthPosix
import TestSupport
import Testing

@testable import HealthEngine
@testable import HealthStorage

/// Version 10 snapshots keep how each batch entry names its rows (``RowNaming``); version 9 files still read.
struct RowNamingSnapshotTests {
    static let type = try! QuantityType.named("heartRate")

    /// A heart-rate batch of `rows` minutes from `first`, named as `name` says.
    static func batch(first: Int, rows: Int, name: (Timestamp, Double, Int) -> UUID?) -> SampleBatch {
        var batch = SampleBatch(
            batchID: uniqueBatchID(), subject: "anna", typeIdentifier: "heartRate", unit: "count/min")
        for row in first..<(first + rows) {
            let start = Timestamp(Int64(row) * Micros.minute)
            let value = Double(50 + row % 70)
            batch.append(start: start, end: start, value: value, source: watch, uuid: name(start, value, row))
        }
        return batch
    }

    static func content(_ start: Timestamp, _ value: Double) -> ContentHash128 {
        SampleContentIdentity.hash(
            sourceName: Array(watch.name.utf8), typeIdentifier: Array("heartRate".utf8), start: start, end: start,
            canonicalValue: value)
    }

    /// A store with one entry of each naming: derived, kept, content and element identities.
    static func store() throws -> HealthStore {
        let store = HealthStore()
        var random = SplitMix64(seed: 5)
        _ = try store.insert(batch(first: 0, rows: 500) { _, _, _ in nil }, beforeApplying: {})
        _ = try store.insert(
            batch(first: 500, rows: 20) { _, _, _ in
                random.nextUUID()
            }, beforeApplying: {})
        _ = try store.insert(
            batch(first: 520, rows: 30) { start, value, _ in content(start, value).uuid }, beforeApplying: {})
        _ = try store.insert(
            batch(first: 550, rows: 5_000) { start, value, _ in
                SampleElementIdentity.uuid(base: content(start, value), extras: random.next())
            }, beforeApplying: {})
        return store
    }

    @Test("HKSNAP10 keeps each entry's naming and every row's UUID; element extras cost 8 bytes a row on disk")
    func roundTrip() throws {
        let store = try Self.store()
        let (image, _) = store.image(of: Self.type) { () }
        #expect(
            image.series[0].batches.map { SnapshotCodec.NamingCode($0.naming) } == [.batch, .kept, .content, .elements])
        let bytes = SnapshotCodec.encode(image, sequence: 4)
        #expect(Array(bytes.prefix(8)) == Array("HKSNAP10".utf8))
        // The 5,000 imported rows' names: their extras, not their UUIDs.
        #expect(bytes.count < 5_000 * 8 + 20 * 16 + 8_000)
        let decoded = try SnapshotCodec.decode(bytes)
        #expect(decoded.image == image)
        let restored = HealthStore()
        try restored.restore(decoded.image)
        #expect(
            try restored.samples(subject: "anna", type: Self.type).uuids
                == store.samples(subject: "anna", type: Self.type).uuids)
    }

    @Test("read with the file's memory, kept UUIDs and extras stay there: no heap, the same UUIDs, the same file again")
    func coldExtras() throws {
        let store = try Self.store()
        let bytes = SnapshotCodec.encode(store.image(of: Self.type) { () }.0, sequence: 4)
        let memory = CopiedBlockMemory(bytes)
        let decoded = try SnapshotCodec.decode(bytes, blocksIn: memory, extrasIn: memory)
        let entry = try #require(decoded.image.series[0].batches.last)
        guard case .elements(let extras) = entry.naming else {
            Issue.record("the last entry is not element-named")
            return
        }
        #expect(extras.isCold && extras.count == 5_000)
        guard case .kept(let uuids) = decoded.image.series[0].batches[1].naming else {
            Issue.record("the second entry does not keep its UUIDs")
            return
        }
        #expect(uuids.isCold && uuids.count == 20)
        let restored = HealthStore()
        try restored.restore(decoded.image)
        #expect(restored.info().memory.elementExtras == 0 && restored.info().memory.keptUUIDs == 0)
        #expect(
            try restored.samples(subject: "anna", type: Self.type).uuids
                == store.samples(subject: "anna", type: Self.type).uuids)
        #expect(SnapshotCodec.encode(restored.image(of: Self.type) { () }.0, sequence: 4) == bytes)
        // New imports after the restart start an entry of their own in the heap; both are still recognised.
        var random = SplitMix64(seed: 9)
        let more = Self.batch(first: 6_000, rows: 10) { start, value, _ in
            SampleElementIdentity.uuid(base: Self.content(start, value), extras: random.next())
        }
        #expect(try restored.insert(more, beforeApplying: {}).inserted == 10)
        #expect(restored.info().memory.elementExtras >= 80)
        var again = more
        again.batchID = uniqueBatchID()
        #expect(try restored.insert(again, beforeApplying: {}).duplicates == 10)
    }

    /// Lines of /proc/self/maps naming files under `directory` that are gone.
    static func deletedMappings(under directory: String) throws -> [String] {
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        return maps.split(separator: "\n").map(String.init).filter {
            $0.contains(directory) && $0.hasSuffix("(deleted)")
        }
    }

    @Test(
        "a snapshot moves listed names out of the heap into its file; a restart and the next snapshot keep them there"
    )
    func extrasFollowSnapshots() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        var random = SplitMix64(seed: 31)
        let imported = Self.batch(first: 0, rows: 3_000) { start, value, _ in
            SampleElementIdentity.uuid(base: Self.content(start, value), extras: random.next())
        }
        // An agent's own UUIDs, kept as sent: they move to the file too (their fingerprints stay in the heap).
        let synced = Self.batch(first: 3_000, rows: 500) { _, _, _ in
            random.nextUUID()
        }
        do {
            let (durable, _) = try openStore(directory)
            _ = try durable.insert(imported)
            _ = try durable.insert(synced)
            #expect(durable.store.info().memory.elementExtras >= 3_000 * 8)
            #expect(durable.store.info().memory.keptUUIDs >= 500 * 16)
            try durable.snapshot()
            #expect(durable.store.info().memory.elementExtras == 0 && durable.store.info().memory.keptUUIDs == 0)
            #expect(
                try durable.store.samples(subject: "anna", type: Self.type).uuids == imported.uuids! + synced.uuids!)
            // The next generation moves them again: the first file, removed, is mapped no more.
            try durable.snapshot()
            #expect(try Self.deletedMappings(under: directory).isEmpty)
            durable.close()
        }

        let (reopened, _) = try openStore(directory)
        #expect(reopened.store.info().memory.elementExtras == 0 && reopened.store.info().memory.keptUUIDs == 0)
        #expect(
            try reopened.store.samples(subject: "anna", type: Self.type).uuids == imported.uuids! + synced.uuids!)
        var again = imported
        again.batchID = uniqueBatchID()
        #expect(try reopened.insert(again).duplicates == 3_000)
        var resent = synced
        resent.batchID = uniqueBatchID()
        #expect(try reopened.insert(resent).duplicates == 500)
        try reopened.snapshot()
        #expect(try Self.deletedMappings(under: directory).isEmpty)
        reopened.close()
    }

    @Test("a version 9 file (naming 0 or 1) reads; naming 2 or 3 in it, or 4 in any, is damage")
    func version9() throws {
        let older = HealthStore()
        _ = try older.insert(Self.batch(first: 0, rows: 100) { _, _, _ in nil }, beforeApplying: {})
        _ = try older.insert(Self.batch(first: 100, rows: 3) { _, _, _ in UUID() }, beforeApplying: {})
        let (image, _) = older.image(of: Self.type) { () }
        let current = SnapshotCodec.encode(image, sequence: 2)
        #expect(try SnapshotCodec.decode(Self.relabelled(current, "HKSNAP09")).image == image)

        let named = SnapshotCodec.encode(try Self.store().image(of: Self.type) { () }.0, sequence: 4)
        #expect { try SnapshotCodec.decode(Self.relabelled(named, "HKSNAP09")) } throws: {
            "\($0)".contains("naming 2")
        }
        // The content entry's naming byte made 4: no such naming.
        var damaged = named
        let code = try #require(try Self.namingOffset(of: 2, in: named))
        damaged[code] = 4
        #expect { try SnapshotCodec.decode(Self.relabelled(damaged, "HKSNAP10")) } throws: {
            "\($0)".contains("naming 4")
        }
    }

    /// `file` with another magic and its checksum made to fit.
    static func relabelled(_ file: [UInt8], _ magic: String) -> [UInt8] {
        var bytes = Array(magic.utf8) + file[8..<(file.count - 4)]
        withUnsafeBytes(of: Zlib.crc32(bytes).littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The offset of the naming byte of the first series' batch entry `index` in `file` (its header's last byte).
    static func namingOffset(of index: Int, in file: [UInt8]) throws -> Int? {
        let image = try SnapshotCodec.decode(file).image
        let entry = image.series[0].batches[index]
        var header = ByteWriter(capacity: 32)
        SnapshotCodec.writeBatchHeader(entry, into: &header)
        return file.firstRange(of: header.bytes).map { $0.upperBound - 1 }
    }
}
