/// `hkq help [COMMAND ...]`: the help screen of hkq or of one command, like `hkq COMMAND --help`.
public struct HelpCommand: Command {
    /// The abstract shown in command lists.
    public static let abstract = "Show help for hkq or one of its commands."

    /// A help command.
    public init() {}

    /// `help`, with the command path as an optional variadic argument.
    public var spec: CommandSpec {
        CommandSpec(
            name: "help", abstract: HelpCommand.abstract,
            arguments: [
                ArgumentSpec(
                    "command", help: "The command to describe, e.g. 'units convert'.", isOptional: true,
                    isVariadic: true)
            ])
    }

    /// Prints the help screen; an unknown command name is a usage error.
    public func run(_ context: CommandContext) async throws {
        let formatter = context.program.helpFormatter
        let path = context.arguments.positionals
        guard let chain = formatter.resolve(path) else {
            throw UsageError("unknown command '\(path.joined(separator: " "))'")
        }
        context.console.out.write(formatter.help(for: chain))
    }
}
