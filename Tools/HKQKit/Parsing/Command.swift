/// What a command is: its name, one-line abstract, arguments, options and subcommands.
public struct CommandSpec: Sendable {
    /// The word that selects the command, e.g. `convert`.
    public var name: String
    /// One line shown in command lists and as the help OVERVIEW.
    public var abstract: String
    /// Optional paragraphs printed after the overview in the command's help.
    public var discussion: String?
    /// Positional arguments, in order.
    public var arguments: [ArgumentSpec]
    /// The command's own options (the global ones are added by hkq).
    public var options: [OptionSpec]
    /// Nested commands; a command with subcommands is a group and selecting one is required, unless
    /// ``runsWithoutSubcommand`` is set.
    public var subcommands: [any Command]
    /// Whether a command with subcommands also runs by itself (`hkq characteristics` shows, `hkq
    /// characteristics set …` sets).
    public var runsWithoutSubcommand: Bool
    /// Whether the command draws `--format chart`; for the others that format is a usage error.
    public var drawsChart: Bool
    /// Whether the command prints lists of records whose fields `--fields` selects; for the others (single
    /// objects such as `stats`, streams such as `watch`) that option is a usage error.
    public var selectsFields: Bool
    /// Whether the command prints `--format ndjson`: its JSON is an array of records one a line (or, for
    /// `changes`, it prints its own lines), printed as the records alone, one a line.
    public var printsJSONLines: Bool

    /// Describes a command.
    public init(
        name: String, abstract: String, discussion: String? = nil, arguments: [ArgumentSpec] = [],
        options: [OptionSpec] = [], subcommands: [any Command] = [], drawsChart: Bool = false,
        runsWithoutSubcommand: Bool = false, selectsFields: Bool = false, printsJSONLines: Bool = false
    ) {
        self.selectsFields = selectsFields
        self.printsJSONLines = printsJSONLines
        self.runsWithoutSubcommand = runsWithoutSubcommand
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.drawsChart = drawsChart
    }
}

/// One hkq command. Add a command by writing a type that conforms (one file in `Commands/`) and listing it in
/// ``HKQ/commands`` (or in a group's subcommands).
///
/// hkq parses the command line against ``spec`` (arguments counted, options known, allowed values checked) before
/// calling ``run(_:)``; `run` throws ``UsageError`` for a bad argument value (exit 64), ``CommandExit`` for a
/// chosen status, and anything else (``HealthModel/HealthError``, client errors) for a runtime failure (exit 1).
public protocol Command: Sendable {
    /// The command's name, abstract, arguments, options and subcommands.
    var spec: CommandSpec { get }

    /// Does the work, printing through `context`. Returning normally exits 0.
    func run(_ context: CommandContext) async throws
}

/// A command that only groups subcommands, such as `units`.
public struct CommandGroup: Command {
    /// The group's name, abstract and subcommands.
    public let spec: CommandSpec

    /// A group named `name` holding `subcommands`.
    public init(name: String, abstract: String, discussion: String? = nil, subcommands: [any Command]) {
        spec = CommandSpec(name: name, abstract: abstract, discussion: discussion, subcommands: subcommands)
    }

    /// Never reached: hkq requires a subcommand for a group before running anything.
    public func run(_ context: CommandContext) async throws {
        throw context.usageError("missing subcommand")
    }
}
