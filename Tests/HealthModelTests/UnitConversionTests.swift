import Testing

import HealthModel

/// Conversions of HEALTHKIT.md §2 against known values, compared with a relative tolerance.
@Suite struct UnitConversionTests {
    /// `value` in `from` must equal `expected` in `to` within `tolerance` (relative, or absolute near zero).
    struct Conversion: Sendable, CustomTestStringConvertible {
        var value: Double
        var from: String
        var to: String
        var expected: Double
        var tolerance = 1e-9
        var testDescription: String { "\(value) \(from) → \(expected) \(to)" }
    }

    @Test(arguments: [
        Conversion(value: 1, from: "mi", to: "m", expected: 1609.344),
        Conversion(value: 1, from: "mi", to: "yd", expected: 1760),
        Conversion(value: 1, from: "ft", to: "in", expected: 12),
        Conversion(value: 5, from: "km", to: "mi", expected: 3.106_855_961_185_27),
        Conversion(value: 98.6, from: "degF", to: "degC", expected: 37),
        Conversion(value: 37, from: "degC", to: "degF", expected: 98.6),
        Conversion(value: -40, from: "degC", to: "degF", expected: -40),
        Conversion(value: 32, from: "degF", to: "degC", expected: 0),
        Conversion(value: 98.6, from: "degF", to: "K", expected: 310.15),
        Conversion(value: 0, from: "K", to: "degC", expected: -273.15),
        Conversion(value: 0, from: "degF", to: "K", expected: 255.372_222_222_222_2),
        Conversion(value: 100, from: "mg/dL", to: "mmol<180.15588000005408>/L", expected: 5.5507, tolerance: 1e-4),
        Conversion(value: 1, from: "mmol<180.15588000005408>/L", to: "mg/dL", expected: 18.015_588_000_005_408),
        Conversion(value: 1, from: "Cal", to: "kcal", expected: 1),
        Conversion(value: 1, from: "kcal", to: "kJ", expected: 4.184),
        Conversion(value: 1, from: "Cal", to: "kJ", expected: 4.184),
        Conversion(value: 1, from: "cal", to: "J", expected: 4.184),
        Conversion(value: 1, from: "kJ", to: "kcal", expected: 0.239_005_736_137_667_3),
        Conversion(value: 72, from: "count/min", to: "count/s", expected: 1.2),
        Conversion(value: 60, from: "count/min", to: "Hz", expected: 1),
        Conversion(value: 2, from: "s^-1", to: "Hz", expected: 2),
        Conversion(value: 50, from: "%", to: "count", expected: 0.5),
        Conversion(value: 0.97, from: "count", to: "%", expected: 97),
        Conversion(value: 1, from: "()", to: "count", expected: 1),
        Conversion(value: 1, from: "lb", to: "g", expected: 453.592_37),
        Conversion(value: 1, from: "kg", to: "lb", expected: 2.204_622_621_848_776),
        Conversion(value: 1, from: "st", to: "lb", expected: 14),
        Conversion(value: 16, from: "oz", to: "lb", expected: 1),
        Conversion(value: 1000, from: "mcg", to: "mg", expected: 1),
        Conversion(value: 1, from: "g", to: "mcg", expected: 1e6),
        Conversion(value: 1, from: "dL", to: "mL", expected: 100),
        Conversion(value: 1, from: "L", to: "mL", expected: 1000),
        Conversion(value: 1, from: "l", to: "L", expected: 1),
        Conversion(value: 1, from: "fl_oz_us", to: "mL", expected: 29.573_529_562_5),
        Conversion(value: 1, from: "fl_oz_imp", to: "mL", expected: 28.413_062_5),
        Conversion(value: 1, from: "cup_us", to: "mL", expected: 236.588_236_5),
        Conversion(value: 1, from: "pt_us", to: "mL", expected: 473.176_473),
        Conversion(value: 1, from: "pt_imp", to: "cup_imp", expected: 2),
        Conversion(value: 1, from: "mL/(kg*min)", to: "L/(kg*hr)", expected: 0.06),
        Conversion(value: 1, from: "mL/(kg*min)", to: "mL/kg·min", expected: 1),
        Conversion(value: 1, from: "kcal/hr·kg", to: "W/kg", expected: 4184.0 / 3600),
        Conversion(value: 1, from: "kcal/hr·kg", to: "kcal/(kg*hr)", expected: 1),
        Conversion(value: 1, from: "kg/m.s^2", to: "Pa", expected: 1),
        Conversion(value: 1, from: "kg/m.s^2", to: "kg/(m.s^2)", expected: 1),
        Conversion(value: 1, from: "atm", to: "mmHg", expected: 760, tolerance: 1e-6),
        Conversion(value: 1, from: "inHg", to: "mmHg", expected: 25.4, tolerance: 1e-6),
        Conversion(value: 1, from: "kPa", to: "mmHg", expected: 7.500_615_758_456_563),
        Conversion(value: 1, from: "cmAq", to: "Pa", expected: 98.0665),
        Conversion(value: 1, from: "d", to: "min", expected: 1440),
        Conversion(value: 1, from: "hr", to: "s", expected: 3600),
        Conversion(value: 1500, from: "ms", to: "s", expected: 1.5),
        Conversion(value: 1, from: "m/s", to: "km/hr", expected: 3.6),
        Conversion(value: 1, from: "W", to: "J/s", expected: 1),
        Conversion(value: 250, from: "mcS", to: "mS", expected: 0.25),
        Conversion(value: 1, from: "IU/mL", to: "IU/L", expected: 1000),
        Conversion(value: 60, from: "dBASPL", to: "dBASPL", expected: 60),
        Conversion(value: 7, from: "ft", to: "ft", expected: 7),
    ])
    func convertsKnownValues(_ row: Conversion) throws {
        let from = try HealthUnit(parsing: row.from)
        let to = try HealthUnit(parsing: row.to)
        let got = try from.convert(row.value, to: to)
        let allowed = row.tolerance * max(1, abs(row.expected))
        #expect(abs(got - row.expected) <= allowed, "got \(got)")
    }

    @Test(arguments: [
        ("kg", "count", "mass", "dimensionless"),
        ("degC", "m", "temperature", "length"),
        ("count/min", "count", "time^-1", "dimensionless"),
        ("IU", "g", "IU", "mass"),
        ("dBASPL", "dBHL", "dBASPL", "dBHL"),
        ("%", "m", "dimensionless", "length"),
        ("mL/(kg*min)", "mL/min", "mass^-1·length^3·time^-1", "length^3·time^-1"),
        ("mol<18>", "L", "mass", "length^3"),
    ])
    func incompatibleConversionsNameBothUnits(from: String, to: String, fromDimension: String, toDimension: String)
        throws
    {
        let source = try HealthUnit(parsing: from)
        let target = try HealthUnit(parsing: to)
        #expect(!source.isCompatible(with: target))
        let message = "cannot convert from \"\(from)\" (\(fromDimension)) to \"\(to)\" (\(toDimension))"
        #expect(throws: HealthError(.incompatibleUnit, message)) { try source.convert(1, to: target) }
    }

    @Test func roundTripsThroughEveryCanonicalUnitAreStable() throws {
        for type in QuantityType.all {
            let unit = type.canonicalUnit
            let base = HealthUnit(symbol: "base", dimension: unit.dimension, scale: 1)
            let there = try unit.convert(12.5, to: base)
            #expect(abs(try base.convert(there, to: unit) - 12.5) < 1e-9, "\(type)")
        }
    }
}
