import Foundation
import HealthModel
import Testing

@testable import HealthImport

@Suite("Batching and sinks")
struct BatchingTests {
    /// `count` step records a minute apart, alternating between two sources.
    static func steps(_ count: Int, type: String = "HKQuantityTypeIdentifierStepCount", unit: String = "count")
        -> [String]
    {
        (0..<count).map { i in
            let minute = String(format: "%02d", i % 60)
            let hour = String(format: "%02d", (i / 60) % 24)
            let day = String(format: "%02d", 1 + i / 1440)
            return Fixtures.record(
                type: type, unit: unit, value: "\(i)", start: "2017-03-\(day) \(hour):\(minute):00 +0000",
                end: "2017-03-\(day) \(hour):\(minute):30 +0000", source: i % 2 == 0 ? "phone" : "watch")
        }
    }

    @Test("batches hold the configured number of rows, with a shared source dictionary and explicit UUIDs")
    func batchSize() throws {
        let (batches, summary) = try Fixtures.importing(
            body: Self.steps(25).joined(separator: "\n"), options: ImportOptions(batchSize: 10))
        #expect(batches.map(\.count) == [10, 10, 5])
        #expect(summary.batches == 3)
        for batch in batches {
            try batch.validateShape()
            #expect(batch.sources.map(\.name) == ["phone", "watch"])
            #expect(batch.uuids?.count == batch.count)
            #expect(batch.metadata == nil)
        }
        #expect(Fixtures.rows(batches).map(\.value) == (0..<25).map(Double.init))
        #expect(Set(batches.map(\.batchID)).count == 3)
    }

    @Test("batch ids depend on the rows: the same rows give the same id, different rows another")
    func batchIDs() throws {
        let body = Self.steps(6).joined(separator: "\n")
        let a = try Fixtures.importing(body: body, options: ImportOptions(batchSize: 3)).batches
        let b = try Fixtures.importing(Fixtures.zip(Fixtures.document(body)), options: ImportOptions(batchSize: 3))
            .batches
        #expect(a.map(\.batchID) == b.map(\.batchID))
        let c = try Fixtures.importing(body: body, options: ImportOptions(batchSize: 2)).batches
        #expect(Set(a.map(\.batchID)).isDisjoint(with: c.map(\.batchID)))
    }

    @Test("pending rows across groups are capped: the largest group is sent early")
    func pendingCap() throws {
        let body = (Self.steps(4) + Self.steps(3, type: "HKQuantityTypeIdentifierFlightsClimbed") + Self.steps(1))
            .joined(separator: "\n")
        let batches = try Fixtures.importing(body: body, options: ImportOptions(batchSize: 100, maxPendingRows: 5))
            .batches
        // The 6th row passes the cap of 5: the 4 steps go; the last step and the flights wait for the end, where
        // groups are flushed in the order they first appeared.
        #expect(
            batches.map { "\($0.typeIdentifier) \($0.count)" } == ["stepCount 4", "stepCount 1", "flightsClimbed 3"])
    }

    @Test("an async sink receives the same batches; a throwing sink stops the import")
    func sinks() async throws {
        let directory = try Fixtures.TemporaryDirectory()
        let path = try directory.write(
            Array(Fixtures.document(Self.steps(30).joined(separator: "\n")).utf8), name: "e.xml")
        let importer = ExportImporter(path: path, subject: "anna", options: ImportOptions(batchSize: 7))
        var received: [SampleBatch] = []
        let summary = try await importer.run { batch in
            await Task.yield()
            received.append(batch)
        }
        #expect(received.map(\.count) == [7, 7, 7, 7, 2])
        #expect(summary.importedCount == 30)
        var synchronous: [SampleBatch] = []
        _ = try importer.run { synchronous.append($0) }
        #expect(synchronous == received)

        struct Stop: Error {}
        var calls = 0
        await #expect(throws: Stop.self) {
            _ = try await importer.run { _ in
                await Task.yield()
                calls += 1
                if calls == 2 { throw Stop() }
            }
        }
        #expect(calls == 2)
    }

    @Test("the pull reader hands out batches, then nil, and its summary; the subject is checked")
    func pullReader() throws {
        let directory = try Fixtures.TemporaryDirectory()
        let path = try directory.write(
            Array(Fixtures.document(Self.steps(3).joined(separator: "\n")).utf8), name: "e.xml")
        let reader = try ExportReader(path: path, subject: "bob")
        let batch = try #require(try reader.nextBatch())
        #expect(batch.subject == "bob" && batch.count == 3)
        #expect(try reader.nextBatch() == nil)
        #expect(try reader.nextBatch() == nil)
        #expect(reader.summary.imported == ["stepCount": 3])
        #expect(reader.progress.fraction == 1)
        #expect(throws: HealthError.self) { _ = try ExportReader(path: path, subject: "") }
    }
}
