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
    /// A category type's samples (HEALTHKIT.md §12): an enumeration value over an interval; statistics are the
    /// time covered per value.
    case category = 4

    /// Whether the style is one of the discrete quantity ones.
    public var isDiscrete: Bool { self != .cumulative && self != .category }

    /// The lowerCamel name of the style.
    public var description: String {
        switch self {
        case .cumulative: "cumulative"
        case .discreteArithmetic: "discreteArithmetic"
        case .discreteTemporallyWeighted: "discreteTemporallyWeighted"
        case .discreteEquivalentContinuousLevel: "discreteEquivalentContinuousLevel"
        case .category: "category"
        }
    }
}

/// A HealthKit sample type the server stores: a quantity type (identifier, canonical unit, aggregation style) or,
/// with ``categoryValues``, a category type (HEALTHKIT.md §12).
///
/// Quantity values are stored in the canonical unit; any compatible unit is accepted on input and output. A
/// category type has no unit (its canonical unit is the dimensionless `()`, and batches carry an empty unit); its
/// values are the raw values of its enumeration, stored in the same columns as quantities.
public struct QuantityType: Hashable, Sendable, CustomStringConvertible {
    /// The short lowerCamel identifier, e.g. `stepCount`.
    public let identifier: String
    /// The unit samples are stored in.
    public let canonicalUnit: HealthUnit
    /// How values combine in statistics.
    public let style: AggregationStyle
    /// Position in ``QuantityType/all``; stable within one build, never persisted or sent.
    public let index: Int
    /// A category type's value enumeration; `nil` for a quantity type.
    public let categoryValues: CategoryValueSet?

    /// Whether this is a category type (`HKCategoryTypeIdentifier…`).
    public var isCategory: Bool { categoryValues != nil }

    /// The full identifier, e.g. `HKQuantityTypeIdentifierStepCount` or `HKCategoryTypeIdentifierSleepAnalysis`.
    public var fullIdentifier: String {
        (isCategory ? QuantityType.categoryPrefix : QuantityType.fullPrefix)
            + (QuantityCatalog.fullSpellings[identifier] ?? identifier.prefix(1).uppercased() + identifier.dropFirst())
    }

    /// The short identifier.
    public var description: String { identifier }

    /// The unit a batch of this type carries when its values are canonical: the canonical unit's symbol, or the
    /// empty string for a category type (which has no unit).
    public var batchUnit: String { isCategory ? "" : canonicalUnit.symbol }

    /// `quantity` or `category`.
    public var kindName: String { isCategory ? "category" : "quantity" }

    static let fullPrefix = "HKQuantityTypeIdentifier"
    static let categoryPrefix = "HKCategoryTypeIdentifier"

    init(
        identifier: String, canonicalUnit: HealthUnit, style: AggregationStyle, index: Int,
        categoryValues: CategoryValueSet? = nil
    ) {
        self.identifier = identifier
        self.canonicalUnit = canonicalUnit
        self.style = style
        self.index = index
        self.categoryValues = categoryValues
    }

    /// Parses a unit given for this type. A category type takes only the empty unit (or `()`), meaning none; a
    /// quantity type any HKUnit string (``ErrorCode/invalidUnit``), which must then fit it
    /// (``ErrorCode/incompatibleUnit``).
    public func unit(parsing text: String) throws -> HealthUnit {
        if isCategory {
            guard text.isEmpty || text == "()" else {
                throw HealthError(
                    .incompatibleUnit, "category type \(identifier) has no unit, but \"\(text)\" was given")
            }
            return canonicalUnit
        }
        let unit = try HealthUnit(parsing: text)
        try SampleRules.validate(unit: unit, for: self)
        return unit
    }
}

extension QuantityType: ExpressibleByStringLiteral {
    /// The type a literal names (`"stepCount"`), for code that names a type it knows; a literal naming no type
    /// stops the program. Names that come from people and peers go through ``named(_:)``.
    public init(stringLiteral name: String) {
        do {
            self = try Self.named(name)
        } catch {
            preconditionFailure("\(error)")
        }
    }
}
