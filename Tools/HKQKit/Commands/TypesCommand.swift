import HealthModel

/// `hkq types`: the type catalog, quantity types with canonical units and aggregation styles, then category
/// types with their value enumerations.
public struct TypesCommand: Command {
    /// A types command.
    public init() {}

    /// `types`, no arguments.
    public var spec: CommandSpec {
        CommandSpec(
            name: "types",
            abstract: "List the quantity types (canonical units, aggregation styles) and the category types.",
            discussion:
                "JSON and CSV add the full identifier (HKQuantityTypeIdentifier..., HKCategoryTypeIdentifier...) and, "
                + "for category types, the values (name and raw value).", selectsFields: true)
    }

    /// Prints one record per type: identifier, fullIdentifier (JSON and CSV only), unit, style, kind, values (JSON
    /// and CSV only).
    public func run(_ context: CommandContext) async throws {
        try context.print(TypesCommand.records(format: context.globals.format))
    }

    /// The catalog as records, in catalog order. A category type's values are, in JSON, an array of
    /// `{"name","rawValue"}` objects in raw-value order, and in CSV `name raw` pairs joined with commas; a quantity
    /// type has none (`null`, an empty CSV field).
    public static func records(format: OutputFormat) -> RecordSet {
        var records = RecordSet(columns: [
            .init("identifier", title: "IDENTIFIER"), .init("fullIdentifier", title: "FULL IDENTIFIER", inTable: false),
            .init("unit", title: "UNIT"), .init("style", title: "STYLE"), .init("kind", title: "KIND"),
            .init("values", title: "VALUES", inTable: false),
        ])
        func values(_ type: QuantityType) -> JSONValue {
            guard let enumeration = type.categoryValues else { return .null }
            guard format == .json else { return .string(enumeration.listing) }
            return .array(
                enumeration.values.map {
                    .object([("name", .string($0.name)), ("rawValue", .integer(Int64($0.rawValue)))])
                })
        }
        for type in QuantityType.all {
            records.append([
                .string(type.identifier), .string(type.fullIdentifier), .string(type.batchUnit),
                .string(type.style.description), .string(type.kindName), values(type),
            ])
        }
        return records
    }
}
