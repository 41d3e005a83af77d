import TestSupport
import Testing

@testable import HealthEngine

/// The UUID fingerprint table agrees with `Set` through inserts, removals and growth.
struct FingerprintSetTests {
    @Test("random inserts and removals agree with Set, colliding home slots and 0 included")
    func agreesWithSet() {
        var random = SplitMix64(seed: 7)
        var table = FingerprintSet()
        var reference = Set<UInt64>()
        // Few distinct values, many of them sharing low bits, so probe runs are long and removals shift them.
        for step in 0..<50_000 {
            let value = step % 97 == 0 ? 0 : (random.next() % 3000) << 44
            if random.next() % 3 == 0 {
                table.remove(value)
                reference.remove(value)
            } else {
                table.insert(value)
                reference.insert(value)
            }
            if step % 1000 == 0 {
                for probe in reference { #expect(table.contains(probe)) }
            }
        }
        #expect(table.count == reference.count)
        for probe in 0..<4000 {
            #expect(table.contains(UInt64(probe) << 44) == reference.contains(UInt64(probe) << 44))
        }
        table.reserve(100_000)
        for probe in reference { #expect(table.contains(probe)) }
        #expect(table.approximateBytes >= 100_000 * 8 * 4 / 3)
    }
}
