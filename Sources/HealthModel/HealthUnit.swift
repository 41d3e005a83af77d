/// The base dimensions a unit reduces to, as integer exponents.
///
/// `count`, `%` and `()` are dimensionless. International units and the two decibel scales are dimensions of
/// their own, so they convert only among themselves. `mol<M>` carries its molar mass and so measures mass.
public struct Dimension: Hashable, Sendable, CustomStringConvertible {
    public var mass: Int8 = 0
    public var length: Int8 = 0
    public var time: Int8 = 0
    public var temperature: Int8 = 0
    public var current: Int8 = 0
    public var luminousIntensity: Int8 = 0
    public var angle: Int8 = 0
    public var internationalUnit: Int8 = 0
    public var soundPressureLevel: Int8 = 0
    public var hearingLevel: Int8 = 0

    public init() {}

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
    public let dimension: Dimension
    public let scale: Double
    public let offset: Double

    public init(symbol: String, dimension: Dimension, scale: Double, offset: Double = 0) {
        self.symbol = symbol
        self.dimension = dimension
        self.scale = scale
        self.offset = offset
    }

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
