/// The base dimensions a unit reduces to, as integer exponents.
///
/// `count`, `%` and `()` are dimensionless. International units and the two decibel scales are dimensions of
/// their own, so they convert only among themselves. `mol<M>` carries its molar mass and so measures mass.
public struct Dimension: Hashable, Sendable, CustomStringConvertible {
    /// Exponent of mass (base: gram).
    public var mass: Int8 = 0
    /// Exponent of length (base: metre).
    public var length: Int8 = 0
    /// Exponent of time (base: second).
    public var time: Int8 = 0
    /// Exponent of temperature (base: kelvin).
    public var temperature: Int8 = 0
    /// Exponent of electric current (base: ampere).
    public var current: Int8 = 0
    /// Exponent of luminous intensity (base: candela).
    public var luminousIntensity: Int8 = 0
    /// Exponent of plane angle (base: radian).
    public var angle: Int8 = 0
    /// Exponent of international units (IU), a dimension of its own.
    public var internationalUnit: Int8 = 0
    /// Exponent of sound pressure level (dBASPL), a dimension of its own.
    public var soundPressureLevel: Int8 = 0
    /// Exponent of hearing level (dBHL), a dimension of its own.
    public var hearingLevel: Int8 = 0

    /// The dimensionless dimension (every exponent 0).
    public init() {}

    /// Dimensionless: `count`, `%`, `()`.
    public static let none = Dimension()

    /// The base unit of the dimension as an HKUnit-style string, e.g. `g·m^-3` for mg/dL and `count` for none.
    ///
    /// Mass is based on the gram (as HealthKit's is); `scale` converts a unit to this base.
    public var baseUnitSymbol: String {
        let parts: [(String, Int8)] = [
            ("g", mass), ("m", length), ("s", time), ("K", temperature), ("A", current), ("cd", luminousIntensity),
            ("rad", angle), ("IU", internationalUnit), ("dBASPL", soundPressureLevel), ("dBHL", hearingLevel),
        ]
        let named = parts.filter { $0.1 != 0 }.map { $0.1 == 1 ? $0.0 : "\($0.0)^\($0.1)" }
        return named.isEmpty ? "count" : named.joined(separator: "·")
    }

    /// The non-zero exponents, e.g. `mass·length^-3`, or `dimensionless`.
    public var description: String {
        let parts: [(String, Int8)] = [
            ("mass", mass), ("length", length), ("time", time), ("temperature", temperature),
            ("current", current), ("luminousIntensity", luminousIntensity), ("angle", angle), ("IU", internationalUnit),
            ("dBASPL", soundPressureLevel), ("dBHL", hearingLevel),
        ]
        let named = parts.filter { $0.1 != 0 }.map { $0.1 == 1 ? $0.0 : "\($0.0)^\($0.1)" }
        return named.isEmpty ? "dimensionless" : named.joined(separator: "·")
    }
}

/// A parsed HKUnit string: its dimension and how to convert its values to the base unit of that dimension.
///
/// `base = value × scale + offset`. Only lone temperatures (`degC`, `degF`) have an offset.
public struct HealthUnit: Hashable, Sendable, CustomStringConvertible {
    /// The unit string as written.
    public let symbol: String
    /// The base dimensions the unit reduces to; units convert only within one dimension.
    public let dimension: Dimension
    /// Base-unit value of 1 of this unit (before the offset), e.g. 1000 for `kg`.
    public let scale: Double
    /// Added after scaling to reach the base unit (kelvin); non-zero only for lone `degC` and `degF`.
    public let offset: Double

    /// A unit from its parts; prefer ``init(parsing:)``.
    public init(symbol: String, dimension: Dimension, scale: Double, offset: Double = 0) {
        self.symbol = symbol
        self.dimension = dimension
        self.scale = scale
        self.offset = offset
    }

    /// The non-zero exponents, e.g. `mass·length^-3`, or `dimensionless`.
    public var description: String { symbol }

    /// Whether values convert between the two units (same base dimensions).
    public func isCompatible(with other: HealthUnit) -> Bool { dimension == other.dimension }

    /// Converts `value` from this unit to `target`; throws ``ErrorCode/incompatibleUnit`` naming both.
    public func convert(_ value: Double, to target: HealthUnit) throws -> Double {
        guard isCompatible(with: target) else {
            throw HealthError(
                .incompatibleUnit,
                "cannot convert from \"\(symbol)\" (\(dimension)) to \"\(target.symbol)\" (\(target.dimension))")
        }
        if self == target { return value }
        return ((value * scale + offset) - target.offset) / target.scale
    }
}

extension HealthUnit: ExpressibleByStringLiteral {
    /// The unit a literal spells (`"km"`), for code that names a unit it knows; a literal that does not parse
    /// stops the program. Units that come from people and peers go through ``init(parsing:)``.
    public init(stringLiteral text: String) {
        do {
            self = try Self(parsing: text)
        } catch {
            preconditionFailure("\(error)")
        }
    }
}
