import Testing

@testable import HealthModel

/// The HKUnit grammar of HEALTHKIT.md §2: what parses, to which dimension and scale, and what fails with which message.
@Suite struct UnitParsingTests {
    /// A unit string, the dimension it must reduce to, and its scale to the base unit (gram, metre, second, kelvin).
    struct Parsed: Sendable, CustomTestStringConvertible {
        var text: String
        var dimension: String
        var scale: Double
        var testDescription: String { text }
    }

    @Test(arguments: [
        Parsed(text: "count", dimension: "dimensionless", scale: 1),
        Parsed(text: "()", dimension: "dimensionless", scale: 1),
        Parsed(text: "%", dimension: "dimensionless", scale: 0.01),
        Parsed(text: "g", dimension: "mass", scale: 1),
        Parsed(text: "kg", dimension: "mass", scale: 1000),
        Parsed(text: "mcg", dimension: "mass", scale: 1e-6),
        Parsed(text: "ng", dimension: "mass", scale: 1e-9),
        Parsed(text: "pg", dimension: "mass", scale: 1e-12),
        Parsed(text: "fg", dimension: "mass", scale: 1e-15),
        Parsed(text: "lb", dimension: "mass", scale: 453.59237),
        Parsed(text: "oz", dimension: "mass", scale: 28.349523125),
        Parsed(text: "st", dimension: "mass", scale: 6350.29318),
        Parsed(text: "m", dimension: "length", scale: 1),
        Parsed(text: "dam", dimension: "length", scale: 10),
        Parsed(text: "hm", dimension: "length", scale: 100),
        Parsed(text: "cm", dimension: "length", scale: 0.01),
        Parsed(text: "mi", dimension: "length", scale: 1609.344),
        Parsed(text: "in", dimension: "length", scale: 0.0254),
        Parsed(text: "L", dimension: "length^3", scale: 1e-3),
        Parsed(text: "l", dimension: "length^3", scale: 1e-3),
        Parsed(text: "dL", dimension: "length^3", scale: 1e-4),
        Parsed(text: "mL", dimension: "length^3", scale: 1e-6),
        Parsed(text: "fl_oz_us", dimension: "length^3", scale: 0.0295735295625e-3),
        Parsed(text: "cup_imp", dimension: "length^3", scale: 0.284130625e-3),
        Parsed(text: "s", dimension: "time", scale: 1),
        Parsed(text: "ms", dimension: "time", scale: 1e-3),
        Parsed(text: "min", dimension: "time", scale: 60),
        Parsed(text: "hr", dimension: "time", scale: 3600),
        Parsed(text: "d", dimension: "time", scale: 86400),
        Parsed(text: "Hz", dimension: "time^-1", scale: 1),
        Parsed(text: "GHz", dimension: "time^-1", scale: 1e9),
        Parsed(text: "s^-1", dimension: "time^-1", scale: 1),
        Parsed(text: "count/min", dimension: "time^-1", scale: 1.0 / 60),
        Parsed(text: "K", dimension: "temperature", scale: 1),
        Parsed(text: "degC", dimension: "temperature", scale: 1),
        Parsed(text: "degF", dimension: "temperature", scale: 5.0 / 9),
        Parsed(text: "Pa", dimension: "mass·length^-1·time^-2", scale: 1000),
        Parsed(text: "kPa", dimension: "mass·length^-1·time^-2", scale: 1e6),
        Parsed(text: "mmHg", dimension: "mass·length^-1·time^-2", scale: 133_322.387415),
        Parsed(text: "cmAq", dimension: "mass·length^-1·time^-2", scale: 98_066.5),
        Parsed(text: "atm", dimension: "mass·length^-1·time^-2", scale: 101_325_000),
        Parsed(text: "inHg", dimension: "mass·length^-1·time^-2", scale: 3_386_388.16),
        Parsed(text: "kg/m.s^2", dimension: "mass·length^-1·time^-2", scale: 1000),
        Parsed(text: "kg/(m.s^2)", dimension: "mass·length^-1·time^-2", scale: 1000),
        Parsed(text: "J", dimension: "mass·length^2·time^-2", scale: 1000),
        Parsed(text: "kJ", dimension: "mass·length^2·time^-2", scale: 1e6),
        Parsed(text: "cal", dimension: "mass·length^2·time^-2", scale: 4184),
        Parsed(text: "kcal", dimension: "mass·length^2·time^-2", scale: 4_184_000),
        Parsed(text: "Cal", dimension: "mass·length^2·time^-2", scale: 4_184_000),
        Parsed(text: "W", dimension: "mass·length^2·time^-3", scale: 1000),
        Parsed(text: "V", dimension: "mass·length^2·time^-3·current^-1", scale: 1000),
        Parsed(text: "S", dimension: "mass^-1·length^-2·time^3·current^2", scale: 1e-3),
        Parsed(text: "mcS", dimension: "mass^-1·length^-2·time^3·current^2", scale: 1e-9),
        Parsed(text: "rad", dimension: "angle", scale: 1),
        Parsed(text: "lx", dimension: "length^-2·luminousIntensity", scale: 1),
        Parsed(text: "IU", dimension: "IU", scale: 1),
        Parsed(text: "IU/mL", dimension: "length^-3·IU", scale: 1e6),
        Parsed(text: "dBASPL", dimension: "dBASPL", scale: 1),
        Parsed(text: "dBHL", dimension: "dBHL", scale: 1),
        Parsed(text: "m/s", dimension: "length·time^-1", scale: 1),
        Parsed(text: "mg/dL", dimension: "mass·length^-3", scale: 10),
        Parsed(text: "mmol<180.15588000005408>/L", dimension: "mass·length^-3", scale: 180.15588000005408),
        Parsed(text: "mol<18.015>", dimension: "mass", scale: 18.015),
        Parsed(text: "mL/(kg*min)", dimension: "length^3·mass^-1·time^-1", scale: 1e-6 / (1000 * 60)),
        Parsed(text: "mL/kg*min", dimension: "length^3·mass^-1·time^-1", scale: 1e-6 / (1000 * 60)),
        Parsed(text: "kcal/hr·kg", dimension: "length^2·time^-3", scale: 4_184_000 / (3600 * 1000)),
        Parsed(text: "kcal/(kg*hr)", dimension: "length^2·time^-3", scale: 4_184_000 / (3600 * 1000)),
        Parsed(text: "m^2", dimension: "length^2", scale: 1),
        Parsed(text: "cm^+2", dimension: "length^2", scale: 1e-4),
        Parsed(text: "(m*s)^2", dimension: "length^2·time^2", scale: 1),
        Parsed(text: "((m))", dimension: "length", scale: 1),
        Parsed(text: "m^0", dimension: "dimensionless", scale: 1),
        Parsed(text: "m/m", dimension: "dimensionless", scale: 1),
    ])
    func parses(_ expected: Parsed) throws {
        let unit = try HealthUnit(parsing: expected.text)
        #expect(unit.symbol == expected.text)
        #expect(unit.dimension.description == Self.canonicalOrder(expected.dimension))
        #expect(abs(unit.scale - expected.scale) <= 1e-12 * abs(expected.scale))
    }

    /// The dimension description lists base dimensions in a fixed order; the table above may list them freely.
    static func canonicalOrder(_ description: String) -> String {
        let order = [
            "mass", "length", "time", "temperature", "current", "luminousIntensity", "angle", "IU", "dBASPL", "dBHL",
        ]
        let parts = description.split(separator: "·").map(String.init)
        func base(_ part: String) -> String { String(part.split(separator: "^").first ?? "") }
        return parts.sorted { order.firstIndex(of: base($0))! < order.firstIndex(of: base($1))! }
            .joined(separator: "·")
    }

    @Test func onlyLoneTemperaturesCarryAnOffset() throws {
        #expect(try HealthUnit(parsing: "degC").offset == 273.15)
        #expect(abs(try HealthUnit(parsing: "degF").offset - 255.372_222_222) < 1e-9)
        #expect(try HealthUnit(parsing: "degC/min").offset == 0)
        #expect(try HealthUnit(parsing: "K").offset == 0)
    }

    @Test(arguments: [
        ("", #"the unit is empty (write "()" for a dimensionless unit)"#),
        ("m//s", #"more than one "/""#),
        ("m/s/kg", #"more than one "/""#),
        ("m/(kg/s)", #"more than one "/""#),
        ("m/", #"nothing after "/""#),
        ("/s", #"unexpected "/" at position 1"#),
        ("kg*", "a unit is missing at the end"),
        ("m**s", #"unexpected "*" at position 3"#),
        ("m^", #""^" needs an integer exponent"#),
        ("m^x", #""^" needs an integer exponent"#),
        ("m^-", #""^" needs an integer exponent"#),
        ("m^1234", #""^" needs an integer exponent"#),
        ("m^2^3", #"unexpected "^" at position 4"#),
        ("m^200", "an exponent is too large"),
        ("m^100*m^100", "an exponent is too large"),
        ("km^99/mm^99", "the unit's scale is out of range"),
        ("(m/s)", #""/" is not allowed inside parentheses"#),
        ("(kg", "unbalanced parentheses"),
        ("kg)", #"unexpected ")" at position 3"#),
        ("(())", #"unexpected ")" at position 3"#),
        ("mol", #""mol" needs a molar mass in grams per mole, as in mol<180.16>"#),
        ("mol<abc>", #"the molar mass in "mol<abc>" is not a positive number"#),
        ("mol<-5>", #"the molar mass in "mol<-5>" is not a positive number"#),
        ("mol<0>", #"the molar mass in "mol<0>" is not a positive number"#),
        ("mmol<180", #""<" without a closing ">""#),
        ("xyz", #"unknown unit "xyz""#),
        ("kmin", #"unknown unit "kmin""#),
        ("m%", #"unknown unit "m%""#),
        ("kcount", #"unknown unit "kcount""#),
        ("count min", #"unknown unit "count min""#),
        ("Kg", #"unknown unit "Kg""#),
        ("µg", #"unknown unit "µg""#),
    ])
    func failsWithAMessageNamingTheString(text: String, problem: String) {
        #expect(throws: HealthError(.invalidUnit, "cannot parse unit \"\(text)\": \(problem)")) {
            try HealthUnit(parsing: text)
        }
    }

    @Test func equivalentSpellingsAreCompatibleAndConvertOneToOne() throws {
        let pairs = [
            ("kg/m.s^2", "kg/(m.s^2)"), ("s^-1", "Hz"), ("kcal/hr·kg", "kcal/(hr*kg)"), ("kg/m.s^2", "Pa"),
            ("L", "l"), ("Cal", "kcal"), ("count/s", "Hz"), ("mL/kg·min", "mL/(kg.min)"),
        ]
        for (a, b) in pairs {
            let lhs = try HealthUnit(parsing: a)
            let rhs = try HealthUnit(parsing: b)
            #expect(lhs.isCompatible(with: rhs), "\(a) vs \(b)")
            #expect(abs(try lhs.convert(1, to: rhs) - 1) < 1e-12, "\(a) vs \(b)")
        }
    }
}
