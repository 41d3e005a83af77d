import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix
import Testing

@testable import HealthStorage

/// An insert is logged with the batch bytes that arrived, not an encoding made again.
@Suite("inserts logged as received")
struct ReceivedBytesTests {
    @Test("the payload built from received bytes equals the one encoded from the batch, for writer 0 and an identity")
    func samePayload() throws {
        let batch = stepBatch(id: 5, rows: 12)
        let bytes = try SampleBatchCodec.encode(batch)
        for writer: UInt32 in [0, 7] {
            #expect(
                LogChange.insertPayload(batch, writer: writer, encodedBatch: bytes[...])
                    == (try LogChange.insert(batch, writer: writer).encodePayload()))
        }
    }

    @Test("the log holds the received bytes exactly (here a non-default value encoding) and replays them")
    func logsTheBytesThatArrived() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let batch = stepBatch(id: 9, rows: 6)
        // Plain f64 values where the codec would pick a compact integer encoding: other bytes, the same batch.
        let received = try SampleBatchCodec.encode(batch, valueEncoding: .raw)
        #expect(received != (try SampleBatchCodec.encode(batch)))
        #expect(try SampleBatchCodec.decode(received) == batch)
        let (durable, _) = try openStore(directory)
        _ = try durable.insert(batch, writer: 3, encodedBatch: received[...])
        durable.close(snapshot: false)
        let segment = try #require(try segments(directory).last)
        let records = LogFraming.scan(try FileSystem.readFile(segment)).records
        #expect(records.count == 1)
        #expect(records.first.map { Array($0.payload.suffix(received.count)) } == received)
        let (reopened, _) = try openStore(directory)
        defer { reopened.close() }
        #expect(try steps(reopened.store).count == 6)
    }
}
