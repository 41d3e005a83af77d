/// How samples of a quantity type combine in statistics (HEALTHKIT.md §1, §5).
public enum AggregationStyle: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// Values add up over time (steps, distance, energy): sums, pro-rated across buckets.
    case cumulative = 0
    /// Independent readings averaged arithmetically (body mass, blood glucose).
    case discreteArithmetic = 1
    /// Readings averaged by the time they stand for (heart rate).
    case discreteTemporallyWeighted = 2
    /// Sound levels averaged by energy (dBASPL).
    case discreteEquivalentContinuousLevel = 3

    /// Whether the style is one of the discrete ones.
    public var isDiscrete: Bool { self != .cumulative }

    /// The lowerCamel name of the style.
    public var description: String {
        switch self {
        case .cumulative: "cumulative"
        case .discreteArithmetic: "discreteArithmetic"
        case .discreteTemporallyWeighted: "discreteTemporallyWeighted"
        case .discreteEquivalentContinuousLevel: "discreteEquivalentContinuousLevel"
        }
    }
}

/// A HealthKit quantity type: identifier, canonical unit and aggregation style.
///
/// Values are stored in the canonical unit; any compatible unit is accepted on input and output.
public struct QuantityType: Hashable, Sendable, CustomStringConvertible {
    /// The short lowerCamel identifier, e.g. `stepCount`.
    public let identifier: String
    /// The unit samples are stored in.
    public let canonicalUnit: HealthUnit
    /// How values combine in statistics.
    public let style: AggregationStyle
    /// Position in ``QuantityType/all``; stable within one build, never persisted or sent.
    public let index: Int

    /// The full identifier, e.g. `HKQuantityTypeIdentifierStepCount`.
    public var fullIdentifier: String {
        QuantityType.fullPrefix
            + (QuantityCatalog.fullSpellings[identifier] ?? identifier.prefix(1).uppercased() + identifier.dropFirst())
    }

    /// The lowerCamel name of the style.
    public var description: String { identifier }

    static let fullPrefix = "HKQuantityTypeIdentifier"

    init(identifier: String, canonicalUnit: HealthUnit, style: AggregationStyle, index: Int) {
        self.identifier = identifier
        self.canonicalUnit = canonicalUnit
        self.style = style
        self.index = index
    }
}
