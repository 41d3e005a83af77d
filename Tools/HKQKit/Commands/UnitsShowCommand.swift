import HealthModel

/// `hkq units show UNIT`: what a unit string means: its dimension, base unit, scale and offset.
public struct UnitsShowCommand: Command {
    /// A show command.
    public init() {}

    /// `show <unit>`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "show", abstract: "Show the dimension of a unit and its scale to the base unit.",
            discussion: "A value converts to the base unit as value × scale + offset.",
            arguments: [ArgumentSpec("unit", help: "An HKUnit string such as mL/(kg*min).")], selectsFields: true)
    }

    /// Prints one record: unit, dimension, base, scale, offset; an unparsable unit fails (exit 1).
    public func run(_ context: CommandContext) async throws {
        let unit = try HealthUnit(parsing: context.argument(0)!)
        let records = RecordSet(
            columns: [
                .init("unit", title: "UNIT"), .init("dimension", title: "DIMENSION"), .init("base", title: "BASE"),
                .init("scale", title: "SCALE"), .init("offset", title: "OFFSET"),
            ],
            rows: [
                [
                    .string(unit.symbol), .string(unit.dimension.description),
                    .string(unit.dimension.baseUnitSymbol), .number(unit.scale), .number(unit.offset),
                ]
            ])
        try context.printFields(records)
    }
}
