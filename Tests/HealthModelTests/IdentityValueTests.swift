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

    @Test("rounding by arithmetic agrees with printf's rounding bit for bit, at every magnitude and near halves")
    func arithmeticAgreesWithPrinting() {
        var random = SplitMix64(seed: 0x9D16)
        var checked = 0
        func check(_ value: Double) {
            guard let fast = IdentityValue.scaledRounding(value) else { return }
            checked += 1
            #expect(fast.bitPattern == IdentityValue.printedRounding(value).bitPattern, "\(value)")
        }
        for _ in 0..<200_000 {
            // Random magnitudes from 1e-16 to 1e32, and values printed with few digits (as exports are).
            let value = pow(10, Double.random(in: -16..<32, using: &random)) * (Bool.random(using: &random) ? 1 : -1)
            check(value)
            check(Double(String(format: "%.*g", Int.random(in: 1...12, using: &random), value))!)
            check(Double(String(format: "%.*g", 10, value))! * 1.609344)
        }
        // Halves at the 10th digit, powers of ten and their neighbours.
        for value in [1.234567895, 123456789.5, 0.5, 1, 10, 1e9, 999999999.5, 9.999999995, 1e-14, 1e30] {
            for candidate in [value, value.nextUp, value.nextDown] { check(candidate) }
        }
        #expect(checked > 500_000, "the arithmetic path must be the common one")
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

    @Test("values printed with 6 digits in two units agree, values further apart than both roundings do not")
    func roundedValuesAgree() throws {
        var random = SplitMix64(seed: 0x6D16)
        for _ in 0..<5_000 {
            let truth = Double.random(in: 0.0001..<50_000, using: &random)
            // The same quantity printed in miles and in kilometres, each to 6 digits, back in metres.
            let miles = Double(String(format: "%g", truth / 1609.344))! * 1609.344
            let kilometres = Double(String(format: "%g", truth / 1000))! * 1000
            #expect(
                RoundedValues.agree(IdentityValue.rounded(miles), IdentityValue.rounded(kilometres), digits: 6),
                "\(truth) m")
        }
        #expect(!RoundedValues.agree(1.23456, 1.23460, digits: 6))
        #expect(RoundedValues.agree(1.23456, 1.23460, digits: 4))
        #expect(!RoundedValues.agree(-1, 1, digits: 1))
        #expect(RoundedValues.agree(0, 0, digits: 17))
    }
}
