import HealthModel
import Testing

@testable import HealthEngine

struct PackedAnchorMapTests {
    @Test("the packed map answers as a dictionary through appends, inserts, replacements, removals and splits")
    func agreesWithDictionary() {
        var random = SplitMix64(seed: 21)
        var map = PackedAnchorMap()
        var model: [UInt64: UInt32] = [:]
        var next: UInt64 = 1
        func check() {
            #expect(map.count == model.count)
            let sorted = model.sorted { $0.key < $1.key }
            #expect(map.entries.map(\.anchor) == sorted.map(\.key))
            #expect(map.entries.map(\.value) == sorted.map(\.value))
        }
        for round in 0..<6 {
            for _ in 0..<3_000 {
                let value = UInt32(random.next() % (round.isMultiple(of: 2) ? 3 : 70_000))
                switch random.next() % 10 {
                case 0..<7:
                    next += 1 + random.next() % 4
                    map.set(value, anchor: next)
                    model[next] = value
                case 7:
                    let anchor = 1 + random.next() % next
                    map.set(value, anchor: anchor)
                    model[anchor] = value
                case 8:
                    let anchor = 1 + random.next() % next
                    map.remove(anchor: anchor)
                    model[anchor] = nil
                default:
                    // Inserting into the middle of one chunk until it splits.
                    let anchor = 1 + random.next() % max(1, next / 4)
                    map.set(value, anchor: anchor)
                    model[anchor] = value
                }
            }
            let removed = Set((0..<200).map { _ in 1 + random.next() % next })
            map.remove(anchors: removed)
            for anchor in removed { model[anchor] = nil }
            check()
            for _ in 0..<2_000 {
                let anchor = random.next() % (next + 10)
                #expect(map[anchor] == model[anchor])
            }
        }
    }

    @Test("a run of rows that arrived together costs about two bytes each")
    func compact() {
        var map = PackedAnchorMap()
        for anchor in UInt64(1)...100_000 { map.set(UInt32(anchor % 3), anchor: anchor * 2) }
        #expect(map.count == 100_000)
        #expect(map.approximateBytes < 100_000 * 2)
        #expect(map[40_000] == UInt32(20_000 % 3) && map[40_001] == nil)
    }
}
