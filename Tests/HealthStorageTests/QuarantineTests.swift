import Foundation
import HealthEngine
import HealthModel
import HealthPosix
import Testing

@testable import HealthStorage

/// An intact log record that cannot be applied (here: a sample at Int64.min that an older hkd logged before
/// trapping on it) is kept aside, and every start goes on without it instead of failing on it forever.
@Suite("quarantined log records")
struct QuarantineTests {
    /// Appends framed records to the end of `path`.
    static func append(_ records: [[UInt8]], to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        for record in records { try handle.write(contentsOf: record) }
    }

    @Test("a record that cannot be applied is quarantined with its offset; the records after it are replayed")
    func unappliableRecord() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 1))
        let next = durable.recovery.nextSequence + 1
        durable.close(snapshot: false)

        var bad = SampleBatch(batchID: 2, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        bad.append(start: .min, end: 0, value: 1, source: watch)
        let good = stepBatch(id: 3, from: 100, rows: 5)
        let segment = try #require(try segments(directory).last)
        let offset = try FileSystem.size(of: segment)
        try Self.append(
            [
                LogFraming.record(
                    kind: 4, sequence: next, payload: try LogChange.insert(bad, writer: 7).encodePayload()),
                LogFraming.record(
                    kind: 4, sequence: next + 1, payload: try LogChange.insert(good, writer: 7).encodePayload()),
            ], to: segment)

        let (reopened, lines) = try openStore(directory)
        #expect(reopened.recovery.quarantinedRecords == 1)
        #expect(try steps(reopened.store).count == 15)
        let name = (segment as NSString).lastPathComponent
        let kept = directory + "/quarantine/\(name)@\(offset).record"
        #expect(try FileSystem.exists(kept))
        let keptBytes = try FileSystem.readFile(kept)
        #expect(
            LogFraming.scan(LogFraming.segmentHeader(firstSequence: next) + keptBytes).records.first?.sequence == next)
        #expect(lines.all.contains { $0.contains("quarantined log record \(next)") && $0.contains("offset \(offset)") })
        // The log goes on after the quarantined record: a later change and a restart find everything.
        _ = try reopened.insert(stepBatch(id: 4, from: 200, rows: 3))
        reopened.close(snapshot: false)
        let (again, _) = try openStore(directory)
        defer { again.close() }
        #expect(try steps(again.store).count == 18)
        #expect(again.recovery.quarantinedRecords == 1)
    }
}
