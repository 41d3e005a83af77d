/// Parses HKUnit strings (HEALTHKIT.md §2).
///
/// Grammar, with `*`, `.` and `·` all meaning multiplication and binding tighter than the single `/`:
///
///     unit    := "()" | product ( "/" product )?
///     product := factor ( ("*" | "." | "·") factor )*
///     factor  := ( atom | "(" product ")" ) ( "^" ["-"|"+"] digits )?
///     atom    := prefix? siAtom | plainAtom | prefix? "mol<" number ">"
extension HealthUnit {
    /// Parses an HKUnit string such as `count/min`, `mL/(kg*min)` or `mmol<180.15588000005408>/L`.
    ///
    /// Throws ``ErrorCode/invalidUnit`` with a message naming the string and the problem.
    public init(parsing text: String) throws {
        var parser = UnitParser(text: text)
        let (dimension, scale, offset) = try parser.parseUnit()
        self.init(symbol: text, dimension: dimension, scale: scale, offset: offset)
    }
}

/// A dimension with its scale to the base unit; the building block of unit arithmetic.
struct ScaledDimension {
    var dimension = Dimension()
    var scale = 1.0

    /// This quantity to an integer power; `nil` when an exponent leaves the range of ``Dimension``.
    func raised(to power: Int) -> ScaledDimension? {
        guard let dimension = dimension.scaled(by: power) else { return nil }
        return ScaledDimension(dimension: dimension, scale: pow(scale, power))
    }

    /// The product (`sign` 1) or quotient (`sign` -1); `nil` when an exponent leaves the range of ``Dimension``.
    func multiplied(by other: ScaledDimension, sign: Int) -> ScaledDimension? {
        guard let dimension = dimension.adding(other.dimension, sign: sign) else { return nil }
        return ScaledDimension(dimension: dimension, scale: sign > 0 ? scale * other.scale : scale / other.scale)
    }
}

/// Integer power without Foundation, exact for the small exponents units use.
private func pow(_ base: Double, _ exponent: Int) -> Double {
    var result = 1.0
    for _ in 0..<abs(exponent) { result *= base }
    return exponent < 0 ? 1 / result : result
}

extension Dimension {
    /// Every exponent times `power`; `nil` when one leaves `Int8`.
    func scaled(by power: Int) -> Dimension? { combining(.none) { own, _ in own * power } }

    /// Exponents added (`sign` 1) or subtracted (`sign` -1); `nil` when one leaves `Int8`.
    func adding(_ other: Dimension, sign: Int) -> Dimension? { combining(other) { $0 + sign * $1 } }

    /// Each exponent `combine(own, other's)`; `nil` when one leaves `Int8`. Spelled out field by field: key paths
    /// would cost hkq's start their first-use set-up at every command.
    private func combining(_ other: Dimension, _ combine: (Int, Int) -> Int) -> Dimension? {
        func exponent(_ own: Int8, _ theirs: Int8) -> Int8? { Int8(exactly: combine(Int(own), Int(theirs))) }
        guard let mass = exponent(mass, other.mass), let length = exponent(length, other.length),
            let time = exponent(time, other.time), let temperature = exponent(temperature, other.temperature),
            let current = exponent(current, other.current),
            let luminousIntensity = exponent(luminousIntensity, other.luminousIntensity),
            let angle = exponent(angle, other.angle),
            let internationalUnit = exponent(internationalUnit, other.internationalUnit),
            let soundPressureLevel = exponent(soundPressureLevel, other.soundPressureLevel),
            let hearingLevel = exponent(hearingLevel, other.hearingLevel)
        else { return nil }
        return Dimension(
            mass: mass, length: length, time: time, temperature: temperature, current: current,
            luminousIntensity: luminousIntensity, angle: angle, internationalUnit: internationalUnit,
            soundPressureLevel: soundPressureLevel, hearingLevel: hearingLevel)
    }

    init(
        mass: Int8 = 0, length: Int8 = 0, time: Int8 = 0, temperature: Int8 = 0, current: Int8 = 0,
        luminousIntensity: Int8 = 0, angle: Int8 = 0, internationalUnit: Int8 = 0, soundPressureLevel: Int8 = 0,
        hearingLevel: Int8 = 0
    ) {
        self.mass = mass
        self.length = length
        self.time = time
        self.temperature = temperature
        self.current = current
        self.luminousIntensity = luminousIntensity
        self.angle = angle
        self.internationalUnit = internationalUnit
        self.soundPressureLevel = soundPressureLevel
        self.hearingLevel = hearingLevel
    }
}

/// The unit atoms and prefixes of HEALTHKIT.md §2. Base units: gram, metre, second, kelvin, ampere, candela,
/// radian (mass is based on the gram, as HealthKit's is).
enum UnitAtoms {
    /// Atoms that take an SI prefix.
    static let prefixable: [String: ScaledDimension] = [
        "g": .init(dimension: .init(mass: 1), scale: 1),
        "m": .init(dimension: .init(length: 1), scale: 1),
        "L": .init(dimension: .init(length: 3), scale: 1e-3),
        "l": .init(dimension: .init(length: 3), scale: 1e-3),
        "Pa": .init(dimension: .init(mass: 1, length: -1, time: -2), scale: 1000),
        "s": .init(dimension: .init(time: 1), scale: 1),
        "J": .init(dimension: .init(mass: 1, length: 2, time: -2), scale: 1000),
        "K": .init(dimension: .init(temperature: 1), scale: 1),
        "S": .init(dimension: .init(mass: -1, length: -2, time: 3, current: 2), scale: 1e-3),
        "Hz": .init(dimension: .init(time: -1), scale: 1),
        "V": .init(dimension: .init(mass: 1, length: 2, time: -3, current: -1), scale: 1000),
        "W": .init(dimension: .init(mass: 1, length: 2, time: -3), scale: 1000),
        "rad": .init(dimension: .init(angle: 1), scale: 1),
        "lx": .init(dimension: .init(length: -2, luminousIntensity: 1), scale: 1),
    ]

    /// Atoms that take no prefix; matched before prefixed atoms, so `min` is minutes and `mmHg` is not milli-mHg.
    static let plain: [String: ScaledDimension] = [
        "oz": .init(dimension: .init(mass: 1), scale: 28.349523125),
        "lb": .init(dimension: .init(mass: 1), scale: 453.59237),
        "st": .init(dimension: .init(mass: 1), scale: 6350.29318),
        "in": .init(dimension: .init(length: 1), scale: 0.0254),
        "ft": .init(dimension: .init(length: 1), scale: 0.3048),
        "yd": .init(dimension: .init(length: 1), scale: 0.9144),
        "mi": .init(dimension: .init(length: 1), scale: 1609.344),
        "mmHg": .init(dimension: .init(mass: 1, length: -1, time: -2), scale: 133_322.387415),
        "cmAq": .init(dimension: .init(mass: 1, length: -1, time: -2), scale: 98_066.5),
        "atm": .init(dimension: .init(mass: 1, length: -1, time: -2), scale: 101_325_000),
        "inHg": .init(dimension: .init(mass: 1, length: -1, time: -2), scale: 3_386_388.16),
        "fl_oz_us": .init(dimension: .init(length: 3), scale: 0.0295735295625e-3),
        "fl_oz_imp": .init(dimension: .init(length: 3), scale: 0.0284130625e-3),
        "pt_us": .init(dimension: .init(length: 3), scale: 0.473176473e-3),
        "pt_imp": .init(dimension: .init(length: 3), scale: 0.56826125e-3),
        "cup_us": .init(dimension: .init(length: 3), scale: 0.2365882365e-3),
        "cup_imp": .init(dimension: .init(length: 3), scale: 0.284130625e-3),
        "min": .init(dimension: .init(time: 1), scale: 60),
        "hr": .init(dimension: .init(time: 1), scale: 3600),
        "d": .init(dimension: .init(time: 1), scale: 86400),
        "cal": .init(dimension: .init(mass: 1, length: 2, time: -2), scale: 4184),
        "kcal": .init(dimension: .init(mass: 1, length: 2, time: -2), scale: 4_184_000),
        "Cal": .init(dimension: .init(mass: 1, length: 2, time: -2), scale: 4_184_000),
        "degC": .init(dimension: .init(temperature: 1), scale: 1),
        "degF": .init(dimension: .init(temperature: 1), scale: 5.0 / 9.0),
        "IU": .init(dimension: .init(internationalUnit: 1), scale: 1),
        "count": .init(dimension: .init(), scale: 1),
        "%": .init(dimension: .init(), scale: 0.01),
        "dBASPL": .init(dimension: .init(soundPressureLevel: 1), scale: 1),
        "dBHL": .init(dimension: .init(hearingLevel: 1), scale: 1),
    ]

    /// Offsets of the affine temperature atoms (kelvin = value × scale + offset), applied only to a lone atom.
    static let offsets: [String: Double] = ["degC": 273.15, "degF": 459.67 * 5.0 / 9.0]

    /// SI prefixes; `mc` is micro.
    static let prefixes: [String: Double] = [
        "da": 1e1, "h": 1e2, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
        "d": 1e-1, "c": 1e-2, "m": 1e-3, "mc": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15,
    ]
}

/// A recursive-descent parser over the characters of one unit string.
struct UnitParser {
    let text: String
    private let chars: [Character]
    private var position = 0

    init(text: String) {
        self.text = text
        self.chars = Array(text)
    }

    private func failure(_ problem: String) -> HealthError {
        HealthError(.invalidUnit, "cannot parse unit \"\(text)\": \(problem)")
    }

    // Matched by switch, not kept in a Set<Character>: a set's first use looks up Character's Hashable
    // conformance at run time, a scan of every conformance record that a short hkq command pays.
    private static func isMultiply(_ c: Character) -> Bool {
        switch c {
        case "*", ".", "·": true
        default: false
        }
    }

    private static func isStructural(_ c: Character) -> Bool {
        switch c {
        case "*", ".", "·", "/", "(", ")", "^": true
        default: false
        }
    }

    mutating func parseUnit() throws -> (Dimension, Double, Double) {
        if chars.isEmpty { throw failure("the unit is empty (write \"()\" for a dimensionless unit)") }
        if text == "()" { return (Dimension(), 1, 0) }
        let slashes = chars.filter { $0 == "/" }.count
        if slashes > 1 { throw failure("more than one \"/\"") }
        var result = try parseProduct(insideParentheses: false)
        if position < chars.count, chars[position] == "/" {
            position += 1
            if position == chars.count { throw failure("nothing after \"/\"") }
            guard let quotient = result.multiplied(by: try parseProduct(insideParentheses: false), sign: -1) else {
                throw failure("an exponent is too large")
            }
            result = quotient
        }
        if position < chars.count { throw failure("unexpected \"\(chars[position])\" at position \(position + 1)") }
        guard result.scale.isFinite, result.scale > 0 else { throw failure("the unit's scale is out of range") }
        if let offset = UnitAtoms.offsets[text] { return (result.dimension, result.scale, offset) }
        return (result.dimension, result.scale, 0)
    }

    private mutating func parseProduct(insideParentheses: Bool) throws -> ScaledDimension {
        var result = try parseFactor()
        while position < chars.count, UnitParser.isMultiply(chars[position]) {
            position += 1
            guard let product = result.multiplied(by: try parseFactor(), sign: 1) else {
                throw failure("an exponent is too large")
            }
            result = product
        }
        if insideParentheses, position < chars.count, chars[position] == "/" {
            throw failure("\"/\" is not allowed inside parentheses")
        }
        return result
    }

    private mutating func parseFactor() throws -> ScaledDimension {
        guard position < chars.count else { throw failure("a unit is missing at the end") }
        var base: ScaledDimension
        if chars[position] == "(" {
            position += 1
            base = try parseProduct(insideParentheses: true)
            guard position < chars.count, chars[position] == ")" else { throw failure("unbalanced parentheses") }
            position += 1
        } else {
            base = try parseAtom()
        }
        if position < chars.count, chars[position] == "^" {
            position += 1
            guard let raised = base.raised(to: try parseExponent()) else { throw failure("an exponent is too large") }
            base = raised
        }
        return base
    }

    private mutating func parseExponent() throws -> Int {
        var sign = 1
        if position < chars.count, chars[position] == "-" || chars[position] == "+" {
            sign = chars[position] == "-" ? -1 : 1
            position += 1
        }
        var digits = ""
        while position < chars.count, chars[position].isASCII, chars[position].isNumber {
            digits.append(chars[position])
            position += 1
        }
        guard !digits.isEmpty, digits.count <= 3, let value = Int(digits) else {
            throw failure("\"^\" needs an integer exponent")
        }
        return sign * value
    }

    private mutating func parseAtom() throws -> ScaledDimension {
        var name = ""
        while position < chars.count, !UnitParser.isStructural(chars[position]) {
            if chars[position] == "<" {
                // A molar mass: everything up to ">" belongs to the atom, dots included.
                while position < chars.count, chars[position] != ">" {
                    name.append(chars[position])
                    position += 1
                }
                guard position < chars.count else { throw failure("\"<\" without a closing \">\"") }
            }
            name.append(chars[position])
            position += 1
        }
        if name.isEmpty {
            if position < chars.count { throw failure("unexpected \"\(chars[position])\" at position \(position + 1)") }
            throw failure("a unit is missing at the end")
        }
        if let atom = UnitAtoms.plain[name] { return atom }
        if let atom = try molarAtom(name) { return atom }
        if let atom = UnitAtoms.prefixable[name] { return atom }
        for prefixLength in [2, 1] where name.count > prefixLength {
            let prefix = String(name.prefix(prefixLength))
            guard let factor = UnitAtoms.prefixes[prefix] else { continue }
            let rest = String(name.dropFirst(prefixLength))
            if var atom = try UnitAtoms.prefixable[rest] ?? molarAtom(rest) {
                atom.scale *= factor
                return atom
            }
        }
        throw failure("unknown unit \"\(name)\"")
    }

    /// `mol<M>` with M in grams per mole converts to mass; a prefix may precede it (`mmol<180.16>`).
    private func molarAtom(_ name: String) throws -> ScaledDimension? {
        guard name.hasPrefix("mol") else { return nil }
        guard name.hasPrefix("mol<"), name.hasSuffix(">") else {
            if name == "mol" { throw failure("\"mol\" needs a molar mass in grams per mole, as in mol<180.16>") }
            return nil
        }
        let number = name.dropFirst(4).dropLast()
        guard let molarMass = Double(number), molarMass.isFinite, molarMass > 0 else {
            throw failure("the molar mass in \"\(name)\" is not a positive number")
        }
        return ScaledDimension(dimension: .init(mass: 1), scale: molarMass)
    }
}
