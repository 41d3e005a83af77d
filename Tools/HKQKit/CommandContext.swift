import Foundation

/// Everything a running command needs: what it was given, the resolved global options, where to print.
public struct CommandContext: Sendable {
    /// The program: its commands, global options and help formatter.
    public let program: HKQ
    /// The command's names from the top, e.g. `["units", "convert"]`.
    public let commandPath: [String]
    /// The command's declared arguments and options (global ones included).
    public let arguments: ParsedArguments
    /// Server, subject, token and format after applying the environment and defaults.
    public let globals: GlobalOptions
    /// The process environment (tests pass their own).
    public let environment: [String: String]
    /// Standard output and standard error.
    public let console: Console

    /// A context; hkq builds it after parsing, tests may build one directly.
    public init(
        program: HKQ, commandPath: [String], arguments: ParsedArguments, globals: GlobalOptions,
        environment: [String: String], console: Console
    ) {
        self.program = program
        self.commandPath = commandPath
        self.arguments = arguments
        self.globals = globals
        self.environment = environment
        self.console = console
    }

    /// The same context printing its results to `out` (a pager) instead.
    func printing(to out: any TextSink) -> CommandContext {
        CommandContext(
            program: program, commandPath: commandPath, arguments: arguments, globals: globals,
            environment: environment,
            console: Console(
                out: out, err: console.err, terminal: console.terminal, nextPage: console.nextPage))
    }

    /// A usage error (exit 64) located in this command.
    public func usageError(_ message: String) -> UsageError { UsageError(message, commandPath: commandPath) }

    /// The positional argument at `index` (declaration order); `nil` when an optional one was left out.
    public func argument(_ index: Int) -> String? {
        index < arguments.positionals.count ? arguments.positionals[index] : nil
    }

    /// The positional argument at `index` as a finite number; a usage error names it otherwise.
    public func number(argument index: Int, named name: String) throws -> Double {
        let text = argument(index) ?? ""
        guard let value = Double(text), value.isFinite else {
            throw usageError("invalid value '\(text)' for '<\(name)>'; expected a number")
        }
        return value
    }

    /// The last value of option `name` as an integer, `nil` when absent; a usage error when not an integer.
    public func integer(option name: String) throws -> Int? {
        guard let text = arguments.value(name) else { return nil }
        guard let value = Int(text) else {
            throw usageError("invalid value '\(text)' for '--\(name)'; expected an integer")
        }
        return value
    }

    /// A formatter for instants in `zone` that writes JSON and CSV instants per `--time-format`.
    public func times(in zone: TimeZone) -> TimestampFormatter {
        TimestampFormatter(timeZone: zone, timeFormat: globals.timeFormat)
    }

    /// `records` with only the columns `--fields` selects (all without it); a usage error for a field that is
    /// neither a column nor one of `extraFields` (JSON keys only some records carry, such as `metadata`).
    public func selected(_ records: RecordSet, extraFields: [String] = []) throws -> RecordSet {
        guard let fields = globals.fields else { return records }
        return try records.selecting(fields, extraFields: extraFields, commandPath: commandPath)
    }

    /// Prints `records` in the chosen ``GlobalOptions/format``, with the columns `--fields` selects (see
    /// ``selected(_:extraFields:)``).
    public func print(_ records: RecordSet, extraFields: [String] = []) throws {
        console.printBlock(try selected(records, extraFields: extraFields).rendered(as: globals.format))
    }

    /// Prints `records` as fields: in a table one `TITLE  value` line per field (records separated by a blank
    /// line), in JSON a lone object when there is one record; CSV as usual. For single results (a unit,
    /// server info, one statistics answer).
    public func printFields(_ records: RecordSet) throws {
        let records = try selected(records)
        switch globals.format {
        case .table, .chart: console.printBlock(records.renderedFields())
        case .json where records.rows.count == 1: console.print(records.jsonObject(row: 0).rendered)
        case .json, .csv: console.printBlock(records.rendered(as: globals.format))
        }
    }

    /// The columns `--format chart` fits its lines in: `COLUMNS` when it is a positive number, else the width of
    /// the terminal standard output is, else 80.
    public var chartWidth: Int {
        if let text = environment["COLUMNS"], let columns = Int(text.trimmingWhitespace), columns > 0 { return columns }
        return console.terminal?.columns ?? 80
    }

    /// Prints one line to standard output.
    public func print(_ line: String) { console.print(line) }
}
