import HealthModel

/// Converts values between two compatible units with the model's formula (through the base unit), exactly
/// the identity when both units have the same scale and offset.
struct UnitTransform: Sendable {
    private let source: HealthUnit
    private let target: HealthUnit
    private let isIdentity: Bool

    /// A conversion between units the caller has checked to be compatible.
    init(from source: HealthUnit, to target: HealthUnit) {
        self.source = source
        self.target = target
        isIdentity = source.scale == target.scale && source.offset == target.offset
    }

    /// From the type's canonical unit to `unit` (`nil`: the canonical unit itself). Throws
    /// ``ErrorCode/incompatibleUnit`` when it does not fit the type.
    init(type: QuantityType, unit: HealthUnit?) throws {
        guard let unit else {
            self.init(from: type.canonicalUnit, to: type.canonicalUnit)
            return
        }
        try SampleRules.validate(unit: unit, for: type)
        self.init(from: type.canonicalUnit, to: unit)
    }

    /// The unit results are in.
    var unit: HealthUnit { target }

    /// A level (value, average, minimum, …): scale and offset.
    func level(_ value: Double) -> Double {
        isIdentity ? value : ((value * source.scale + source.offset) - target.offset) / target.scale
    }

    /// An amount (a sum): scale only, since a sum of offset values is not an offset value.
    func amount(_ value: Double) -> Double {
        isIdentity ? value : value * source.scale / target.scale
    }
}
