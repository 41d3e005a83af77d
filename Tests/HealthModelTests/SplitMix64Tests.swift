import HealthModel
import Testing

/// The seeded generator's sequence is fixed: tests, hkbench's datasets and the fuzz corpus depend on it.
@Suite("SplitMix64")
struct SplitMix64Tests {
    /// The reference sequence of SplitMix64 from seed 0 (Vigna's `splitmix64.c`), and a copy carrying on alike.
    @Test func referenceSequence() {
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        var copy = random
        #expect(random.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(random.next() == 0x06C4_5D18_8009_454F)
        #expect(copy.next() == 0x6E78_9E6A_A1B9_65F4)
    }

    /// Values drawn through `RandomNumberGenerator`, as tests and datasets draw them, from a seed the tests use.
    @Test func drawsFromSeed42() {
        var random = SplitMix64(seed: 42)
        let values = (0..<6).map { _ in random.next() }
        #expect(
            values == [
                0xBDD7_3226_2FEB_6E95, 0x28EF_E333_B266_F103, 0x4752_6757_130F_9F52, 0x581C_E1FF_0E4A_E394,
                0x09BC_585A_2448_23F2, 0xDE44_31FA_3C80_DB06,
            ])
        #expect(Double.random(in: 0..<1, using: &random) == 0.29383672255373094)
        #expect(Int.random(in: 0...512, using: &random) == 410)
    }
}
