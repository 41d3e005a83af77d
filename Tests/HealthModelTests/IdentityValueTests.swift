import Foundation
import TestSupport
import Testing

@testable import HealthModel

@Suite("Identity values")
struct IdentityValueTests {
    @Test("the canonical value is rounded to 9 significant digits; zero has one sign")
    func rounding() {
        #expect(IdentityValue.rounded(44.864266810000001) == 44.8642668)
        #expect(IdentityValue.rounded(1_234_567_894.9) == 1_234_567_890)
        #expect(IdentityValue.rounded(0.000_012_345_678_949) == 0.000_012_345_678_9)
        #expect(IdentityValue.rounded(-0.0).sign == .plus)
        #expect(IdentityValue.rounded(-2.5) == -2.5)
    }

    @Test("a value written in any unit of its dimension names the same identity value, within float noise")
    func unitsAgree() throws {
        var random = SplitMix64(seed: 9)
        let distance = try QuantityType.named("distanceWalkingRunning")
        let units = try ["m", "km", "mi", "ft", "yd", "cm"].map { try HealthUnit(parsing: $0) }
        let metre = try HealthUnit(parsing: "m")
        for _ in 0..<2_000 {
            // A stored value with 6 significant digits in metres, re-written in each unit at full precision.
            let metres = Double(String(format: "%.5e", Double.random(in: 0.001..<100_000, using: &random)))!
            let expected = IdentityValue.canonical(metres, unit: metre, type: distance)
            for unit in units {
                let written = try metre.convert(metres, to: unit)
                #expect(
                    IdentityValue.canonical(written, unit: unit, type: distance) == expected, "\(metres) m in \(unit)")
            }
        }
    }

    @Test("values one digit apart in the 6th significant place stay apart in every unit")
    func lastDigitsStayApart() throws {
        let energy = try QuantityType.named("activeEnergyBurned")
        for symbol in ["kcal", "kJ", "Cal", "J"] {
            let unit = try HealthUnit(parsing: symbol)
            var random = SplitMix64(seed: 3)
            for _ in 0..<1_000 {
                let a = Double(String(format: "%.5e", Double.random(in: 0.01..<10_000, using: &random)))!
                let b = Double(String(format: "%.5e", a.nextUp * (1 + 1e-5)))!
                guard a != b else { continue }
                #expect(
                    IdentityValue.canonical(a, unit: unit, type: energy)
                        != IdentityValue.canonical(b, unit: unit, type: energy), "\(a) vs \(b) \(symbol)")
            }
        }
    }
}
