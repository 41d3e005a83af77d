import HealthModel

/// `hkq units convert VALUE FROM TO`: prints the converted value alone (``NumberFormat/display(_:)``; with
/// `--format json` the exact shortest round-tripping value and the unit).
public struct UnitsConvertCommand: Command {
    /// A convert command.
    public init() {}

    /// `convert <value> <from> <to>`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "convert", abstract: "Convert a value from one unit to another.",
            discussion: "Example: hkq units convert 100 mg/dL 'mmol<180.15588000005408>/L'",
            arguments: [
                ArgumentSpec("value", help: "The number to convert."),
                ArgumentSpec("from", help: "The unit it is in, an HKUnit string such as degF or mg/dL."),
                ArgumentSpec("to", help: "The unit to convert it to."),
            ])
    }

    /// Prints the converted number (JSON: `{"value":…,"unit":…}`); unknown or incompatible units fail (exit 1).
    public func run(_ context: CommandContext) async throws {
        let value = try context.number(argument: 0, named: "value")
        let from = try HealthUnit(parsing: context.argument(1)!)
        let to = try HealthUnit(parsing: context.argument(2)!)
        let converted = try from.convert(value, to: to)
        switch context.globals.format {
        case .json:
            context.print(JSONValue.object([("value", .number(converted)), ("unit", .string(to.symbol))]).rendered)
        case .table, .csv, .chart: context.print(NumberFormat.display(converted))
        }
    }
}
