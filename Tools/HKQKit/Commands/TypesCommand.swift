import HealthModel

/// `hkq types`: the quantity-type catalog with canonical units and aggregation styles.
public struct TypesCommand: Command {
    /// A types command.
    public init() {}

    /// `types`, no arguments.
    public var spec: CommandSpec {
        CommandSpec(
            name: "types", abstract: "List the quantity types with their canonical units and aggregation styles.",
            discussion: "JSON and CSV add the full identifier (HKQuantityTypeIdentifier...).")
    }

    /// Prints one record per type: identifier, fullIdentifier (JSON and CSV only), unit, style.
    public func run(_ context: CommandContext) async throws {
        context.print(TypesCommand.records())
    }

    /// The catalog as records, in catalog order.
    public static func records() -> RecordSet {
        var records = RecordSet(columns: [
            .init("identifier", title: "IDENTIFIER"), .init("fullIdentifier", title: "FULL IDENTIFIER", inTable: false),
            .init("unit", title: "UNIT"), .init("style", title: "STYLE"),
        ])
        for type in QuantityType.all {
            records.append([
                .string(type.identifier), .string(type.fullIdentifier), .string(type.canonicalUnit.symbol),
                .string(type.style.description),
            ])
        }
        return records
    }
}
