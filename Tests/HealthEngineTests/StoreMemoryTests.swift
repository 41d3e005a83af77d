import Foundation
import HealthModel
import Testing

@testable import HealthEngine

@Suite("The store's memory by structure")
struct StoreMemoryTests {
    @Test("UUIDs sent with a batch, their index and repeated metadata are each counted where they are kept")
    func partsFollowWhatIsStored() throws {
        let store = HealthStore()
        let source = SourceInfo(name: "Watch")
        let rows = 10_000
        var batch = SampleBatch(batchID: 1, subject: "anna", typeIdentifier: "heartRate", unit: "count/min")
        var random = SplitMix64(seed: 3)
        for row in 0..<rows {
            let uuid = random.nextUUID()
            batch.append(
                start: Timestamp(Int64(row) * 60_000_000), end: Timestamp(Int64(row) * 60_000_000), value: 60,
                source: source, uuid: uuid, metadata: ["HKMetadataKeyHeartRateMotionContext": .number(Double(row % 3))])
        }
        _ = try store.insert(batch)
        let memory = store.info().memory
        #expect(memory.keptUUIDs >= rows * 16)
        #expect(memory.uuidIndex >= rows * 8)
        // Three distinct rows, then each sample's anchor and row index, bit-packed (the newest 1,024 plain).
        #expect(memory.metadata > rows && memory.metadata < rows * 4)
        #expect(memory.sealedBlocks > 0 && memory.sealedBlocks < rows * 4)
        #expect(memory.total == memory.parts.reduce(0) { $0 + $1.bytes })
        #expect(store.info().approximateBytes + store.info().indexBytes == memory.total)
    }
}
