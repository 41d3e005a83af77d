/// HealthKit's correlation types (HEALTHKIT.md §13): a blood pressure reading (systolic and diastolic) or a food
/// (its dietary quantities). hkd stores a ``Correlation`` as an object of its own that names its members, which
/// are stored once each as the quantity samples they are (exports write them at top level too).
public enum CorrelationType: String, Sendable, CaseIterable {
    case bloodPressure
    case food

    /// The byte the protocol, the log and the snapshot write (blood pressure 1, food 2).
    public var code: UInt8 { self == .bloodPressure ? 1 : 2 }

    /// The type of a ``code``, `nil` for any other byte.
    public init?(code: UInt8) {
        guard let type = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = type
    }

    /// HealthKit's identifier, e.g. `HKCorrelationTypeIdentifierBloodPressure`.
    public var fullIdentifier: String {
        "HKCorrelationTypeIdentifier" + rawValue.prefix(1).uppercased() + rawValue.dropFirst()
    }

    /// The correlation named `name` (short or full identifier, any case), `nil` for anything else.
    public init?(named name: String) {
        let lowered = name.lowercased()
        guard
            let type = Self.allCases.first(where: {
                $0.rawValue.lowercased() == lowered || $0.fullIdentifier.lowercased() == lowered
            })
        else { return nil }
        self = type
    }

    /// The quantity types of its members: systolic then diastolic; for food every dietary type of the catalog.
    public var members: [QuantityType] {
        switch self {
        case .bloodPressure:
            QuantityType.all.filter { $0.identifier == "bloodPressureSystolic" }
                + QuantityType.all.filter { $0.identifier == "bloodPressureDiastolic" }
        case .food: QuantityType.all.filter { $0.identifier.hasPrefix("dietary") }
        }
    }
}
