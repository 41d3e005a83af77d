import Foundation
import Testing

@testable import HealthModel

struct SampleElementIdentityTests {
    @Test("an element identity gives back its extras from the content; other UUIDs give none")
    func extrasRoundTrip() {
        var random = SplitMix64(seed: 11)
        for _ in 0..<20_000 {
            let base = ContentHash128(high: random.next(), low: random.next())
            let extras = random.next()
            let uuid = SampleElementIdentity.uuid(base: base, extras: extras)
            #expect(uuid.isContentIdentityForm)
            #expect(SampleElementIdentity.extras(of: uuid, base: base) == extras)
            #expect(SampleElementIdentity.extras(of: base.uuid, base: base) == nil)
            let other = ContentHash128(high: random.next(), low: random.next())
            #expect(SampleElementIdentity.extras(of: uuid, base: other) == nil)
        }
        let random4 = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        #expect(!random4.isContentIdentityForm)
    }

    @Test("unmix undoes mix for every second argument")
    func unmixInvertsMix() {
        var random = SplitMix64(seed: 12)
        for _ in 0..<10_000 {
            let (a, b) = (random.next(), random.next())
            #expect(SampleElementIdentity.unmix(SampleElementIdentity.mix(a, b), b) == a)
        }
    }

    @Test("a content identity continued from its prefix is the whole hash, as stored data has it")
    func prefixContinues() {
        let whole = SampleContentIdentity.hash(
            sourceName: Array("Watch".utf8), typeIdentifier: Array("heartRate".utf8), start: 5, end: 9,
            canonicalValue: -0.0)
        let prefix = SampleContentIdentity.prefix(sourceName: "Watch".utf8, typeIdentifier: "heartRate".utf8)
        let continued = SampleContentIdentity.hash(prefix: prefix, start: 5, end: 9, canonicalValue: 0)
        // FNV-1a-128 of "Watch", 1F, "heartRate", 1F, 5, 9 and +0.0 (8 bytes little-endian each), as version 8.
        #expect(whole.uuid == UUID(uuidString: "03717ADC-28E2-889A-980C-BF0F43B65B9E"))
        #expect(continued.uuid == whole.uuid)
    }
}
