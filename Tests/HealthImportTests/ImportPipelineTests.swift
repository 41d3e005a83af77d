import Foundation
import HealthModel
import Synchronization
import TestSupport
import Testing

@testable import HealthImport

@Suite("Import pipeline: parse thread, UUID set, line counting")
struct ImportPipelineTests {
    @Test("the UUID set agrees with Set<UUID> through growth, duplicates and the nil UUID")
    func uuidSet() {
        var random = SplitMix64(seed: 20)
        var set = UUIDSet(expected: 4)
        var reference = Set<UUID>()
        var pool: [UUID] = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
        for _ in 0..<5_000 {
            let (a, b) = (random.next(), random.next())
            // Some UUIDs share a half, so slots collide and probing is exercised.
            let high = random.next() % 4 == 0 ? 7 : a
            pool.append(withUnsafeBytes(of: (high, b)) { UUID(uuid: $0.load(as: uuid_t.self)) })
        }
        for _ in 0..<20_000 {
            let uuid = pool[Int(random.next() % UInt64(pool.count))]
            #expect(set.insert(uuid) == reference.insert(uuid).inserted)
        }
        #expect(set.count == reference.count)
        for uuid in pool { #expect(set.contains(uuid) == reference.contains(uuid)) }
    }

    @Test("identical records are counted once, in start order, sharing a start, and out of order")
    func identicalRecords() throws {
        func step(_ minute: Int, _ source: String, _ value: Int) -> String {
            Fixtures.record(
                value: "\(value)", start: "2017-01-21 15:\(10 + minute):00 -0400",
                end: "2017-01-21 15:\(10 + minute):30 -0400", source: source)
        }
        let mixed = [
            step(0, "phone", 1), step(0, "phone", 1), step(0, "watch", 1), step(1, "phone", 2), step(0, "watch", 1),
            step(2, "phone", 3), step(2, "phone", 3),
        ]
        let (batches, summary) = try Fixtures.importing(body: mixed.joined(separator: "\n"))
        #expect(summary.identicalRows == 3)
        #expect(Fixtures.rows(batches).map(\.value) == [1, 1, 2, 3])
        // More rows share one start than are compared one by one; the repeat comes last.
        let shared = (0..<20).map { step(5, "phone", $0) } + [step(5, "phone", 3)]
        let (sharedBatches, sharedSummary) = try Fixtures.importing(body: shared.joined(separator: "\n"))
        #expect(sharedSummary.identicalRows == 1)
        #expect(Fixtures.rows(sharedBatches).count == 20)
    }

    @Test("a zip inflated ahead gives the batches and the damage errors of a zip read in turn")
    func zipReadAhead() async throws {
        let directory = try Fixtures.TemporaryDirectory()
        let xml = Fixtures.document(BatchingTests.steps(3_000).joined(separator: "\n"))
        let path = try directory.write(Fixtures.zip(xml), name: "export.zip")
        let importer = ExportImporter(path: path, subject: "anna", options: ImportOptions(batchSize: 500))
        var synchronous: [SampleBatch] = []
        let summary = try importer.run { synchronous.append($0) }
        var received: [SampleBatch] = []
        let asyncSummary = try await importer.run { batch in
            await Task.yield()
            received.append(batch)
        }
        #expect(received == synchronous && received.count == 6)
        #expect(asyncSummary == summary)

        // The CRC-32 in both headers no longer matches the content.
        var damaged = Fixtures.zip(xml)
        for offset in damaged.indices.dropLast(4)
        where damaged[offset..<offset + 4].elementsEqual([0x50, 0x4B, 0x03, 0x04] as [UInt8]) {
            damaged[offset + 14] ^= 0xFF
        }
        var central = damaged.startIndex
        while central + 4 <= damaged.count {
            if damaged[central..<central + 4].elementsEqual([0x50, 0x4B, 0x01, 0x02] as [UInt8]) {
                damaged[central + 16] ^= 0xFF
            }
            central += 1
        }
        let bad = ExportImporter(path: try directory.write(damaged, name: "bad.zip"), subject: "anna")
        let expected = #expect(throws: HealthError.self) { _ = try bad.run { _ in } }
        let error = await #expect(throws: HealthError.self) { _ = try await bad.run { _ in await Task.yield() } }
        #expect(expected?.message.contains("CRC-32") == true)
        #expect(error?.message == expected?.message)
    }

    @Test("newlines are counted as a byte-by-byte count does, at every offset and length")
    func newlineCount() {
        var random = SplitMix64(seed: 7)
        let bytes = (0..<4_096).map { _ in random.next() % 5 == 0 ? ASCII.newline : UInt8(random.next() % 256) }
        bytes.withUnsafeBufferPointer { all in
            for _ in 0..<500 {
                let start = Int(random.next() % UInt64(all.count))
                let end = start + Int(random.next() % UInt64(all.count - start + 1))
                let span = all.slice(start..<end)
                #expect(XMLTokenizer.newlines(in: span) == span.filter { $0 == ASCII.newline }.count)
            }
        }
        #expect(XMLTokenizer.newlines(in: ByteSpan(start: nil, count: 0)) == 0)
    }

    @Test("the parse thread takes at most depth places, and a stop wakes it with no place given")
    func room() async throws {
        let room = ParseAhead.Room(depth: 2)
        #expect(room.take() && room.take())
        let outcome = Mutex<Bool?>(nil)
        /// Starts a thread that waits for a place and notes whether it got one.
        func waitForPlace() {
            Thread {
                let took = room.take()
                outcome.withLock { $0 = took }
            }.start()
        }
        waitForPlace()
        room.give()
        try await waitUntil("the waiting parse thread got the place given back") { outcome.withLock { $0 } == true }
        outcome.withLock { $0 = nil }
        waitForPlace()
        room.stop()
        try await waitUntil("the stopped parse thread gave up") { outcome.withLock { $0 } == false }
    }

    @Test("the async import reports a missing file and a damaged export as the synchronous one does")
    func asyncErrors() async throws {
        let directory = try Fixtures.TemporaryDirectory()
        let missing = ExportImporter(path: directory.url.appendingPathComponent("none.zip").path, subject: "anna")
        let synchronous = #expect(throws: HealthError.self) { _ = try missing.run { _ in } }
        let asynchronous = await #expect(throws: HealthError.self) {
            _ = try await missing.run { _ in await Task.yield() }
        }
        #expect(asynchronous?.code.rawValue == synchronous?.code.rawValue)
        #expect(asynchronous?.message == synchronous?.message)

        let body = BatchingTests.steps(30).joined(separator: "\n") + "\n<Record type=\"x\""
        let path = try directory.write(Array(Fixtures.document(body).utf8), name: "bad.xml")
        let damaged = ExportImporter(path: path, subject: "anna", options: ImportOptions(batchSize: 7))
        var received = 0
        let error = await #expect(throws: HealthError.self) {
            _ = try await damaged.run { batch in
                await Task.yield()
                received += batch.count
            }
        }
        #expect(error?.code.rawValue == ErrorCode.malformedPayload.rawValue)
        #expect(error?.message == #expect(throws: HealthError.self) { _ = try damaged.run { _ in } }?.message)
        #expect(received == 28)
    }
}
