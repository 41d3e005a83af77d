import HealthModel
import Testing

@testable import HealthEngine

@Suite("A series' metadata, dictionary-encoded")
struct SeriesMetadataTests {
    let walking: [String: MetadataValue] = ["HKMetadataKeyHeartRateMotionContext": .number(1)]
    let resting: [String: MetadataValue] = ["HKMetadataKeyHeartRateMotionContext": .number(0)]

    @Test("rows that repeat are kept once, whatever the number of samples carrying them")
    func repeatedRowsAreKeptOnce() {
        var metadata = SeriesMetadata()
        for anchor in UInt64(1)...10_000 { metadata.set(anchor % 3 == 0 ? resting : walking, anchor: anchor) }
        #expect(metadata.count == 10_000)
        #expect(metadata.distinctCount == 2)
        #expect(metadata[9] == resting)
        #expect(metadata[10] == walking)
        #expect(metadata[10_001] == nil)
        // 12 bytes a row, up to twice that while the arrays grow by doubling.
        #expect(metadata.approximateBytes < 10_000 * 24 + 1_000)
    }

    @Test("anchors out of order, replaced rows and removals keep the table sorted and exact")
    func outOfOrderAndRemovals() {
        var metadata = SeriesMetadata()
        var model: [UInt64: [String: MetadataValue]] = [:]
        var random = SplitMix64(seed: 7)
        for _ in 0..<2_000 {
            let anchor = random.next() % 500
            switch random.next() % 4 {
            case 0:
                metadata.remove(anchor: anchor)
                model[anchor] = nil
            case 1:
                metadata.set([:], anchor: anchor)
                model[anchor] = nil
            default:
                let row: [String: MetadataValue] = ["k": .number(Double(random.next() % 5))]
                metadata.set(row, anchor: anchor)
                model[anchor] = row
            }
        }
        let removed = Set(model.keys.filter { $0 % 2 == 0 })
        metadata.remove(anchors: removed)
        for anchor in removed { model[anchor] = nil }
        #expect(metadata.entries.map(\.anchor) == model.keys.sorted())
        for (anchor, row) in model { #expect(metadata[anchor] == row) }
        #expect(metadata.distinctCount <= 5)
        #expect(metadata == SeriesMetadata(model.map { (anchor: $0.key, metadata: $0.value) }))
    }

    @Test("equality compares rows by anchor, not how the distinct rows are numbered")
    func equalityIgnoresNumbering() {
        var first = SeriesMetadata()
        first.set(walking, anchor: 1)
        first.set(resting, anchor: 2)
        var second = SeriesMetadata()
        second.set(resting, anchor: 2)
        second.set(walking, anchor: 1)
        #expect(first == second)
        second.set(walking, anchor: 2)
        #expect(first != second)
    }
}
