import TestSupport
import Testing

@testable import HealthEngine

/// The UUID fingerprint table agrees with a counted reference through inserts, removals and growth.
struct FingerprintMultisetTests {
    @Test("random inserts and removals agree with counts, colliding home slots, 0 and repeated values included")
    func agreesWithCounts() {
        var random = SplitMix64(seed: 7)
        var table = FingerprintMultiset()
        var reference: [UInt64: Int] = [:]
        // Few distinct values, many of them sharing low bits, so probe runs are long and removals shift them.
        for step in 0..<50_000 {
            let value = step % 97 == 0 ? 0 : (random.next() % 3000) << 44
            if random.next() % 3 == 0 {
                // Only what was inserted is removed (as the ledger does): removing a value never inserted may take
                // an occurrence of one sharing its 48 bits (0 and 16 << 44 here).
                guard let held = reference[value] else { continue }
                table.remove(value)
                reference[value] = held > 1 ? held - 1 : nil
            } else {
                table.insert(value)
                reference[value, default: 0] += 1
            }
            if step % 1000 == 0 {
                for probe in reference.keys { #expect(table.contains(probe)) }
            }
        }
        #expect(table.count == reference.values.reduce(0, +))
        for probe in 0..<4000 {
            let value = UInt64(probe) << 44
            #expect(table.contains(value) == (reference[value] != nil))
        }
        table.reserve(100_000)
        for probe in reference.keys { #expect(table.contains(probe)) }
        #expect(table.approximateBytes >= 100_000 * 6 * 4 / 3)
    }

    @Test("two values sharing their 48 bits are two occurrences: removing one leaves the other found")
    func collidingValuesStayFound() {
        var table = FingerprintMultiset()
        let first: UInt64 = 0x1234_5678_9ABC_DEF0
        // The same folded bits: the top 16 bits are folded into the low ones.
        let second = first ^ (0xFFFF << 48) ^ 0xFFFF
        #expect(FingerprintMultiset.folded(first) == FingerprintMultiset.folded(second))
        table.insert(first)
        table.insert(second)
        table.remove(first)
        #expect(table.contains(second))
        table.remove(second)
        #expect(!table.contains(first) && table.count == 0)
    }
}
