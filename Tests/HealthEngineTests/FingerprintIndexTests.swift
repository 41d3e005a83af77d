import HealthModel
import Testing

@testable import HealthEngine

struct FingerprintIndexTests {
    @Test("the compact index answers as a counted set of 48-bit values through inserts, removals and merges")
    func agreesWithCounts() {
        var random = SplitMix64(seed: 77)
        var index = FingerprintIndex()
        var counts: [UInt64: Int] = [:]
        var inserted: [UInt64] = []
        for round in 0..<8 {
            for _ in 0..<6_000 {
                // Some values again (a colliding pair, or the same UUID stored twice), most new.
                let value =
                    !inserted.isEmpty && random.next() % 8 == 0
                    ? inserted[Int(random.next() % UInt64(inserted.count))] : random.next()
                index.insert(value)
                counts[FingerprintMultiset.folded(value), default: 0] += 1
                inserted.append(value)
            }
            for _ in 0..<(round.isMultiple(of: 2) ? 2_000 : 5_000) {
                let value = inserted[Int(random.next() % UInt64(inserted.count))]
                let folded = FingerprintMultiset.folded(value)
                index.remove(value)
                if let held = counts[folded] { counts[folded] = held > 1 ? held - 1 : nil }
            }
            #expect(index.count == counts.values.reduce(0, +))
            for value in inserted.prefix(3_000) + (0..<3_000).map({ _ in random.next() }) {
                #expect(index.contains(value) == (counts[FingerprintMultiset.folded(value)] != nil))
            }
        }
        // A series restored at once, then written to.
        var restored = FingerprintIndex()
        restored.insert(contentsOf: Array(inserted.prefix(10_000)))
        #expect(restored.count == 10_000)
        #expect(inserted.prefix(10_000).allSatisfy(restored.contains))
    }

    @Test("about 5 bytes a fingerprint once merged")
    func compact() {
        var random = SplitMix64(seed: 78)
        var index = FingerprintIndex()
        index.insert(contentsOf: (0..<500_000).map { _ in random.next() })
        #expect(index.approximateBytes < 500_000 * 6)
        var multiset = FingerprintMultiset()
        for _ in 0..<500_000 { multiset.insert(random.next()) }
        #expect(index.approximateBytes * 2 < multiset.approximateBytes)
    }
}
