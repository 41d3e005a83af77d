/// `hkq help [COMMAND ...]`: the help screen of hkq or of one command, like `hkq COMMAND --help`;
/// `hkq help --man`: the manual page hkq(1) in roff.
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
            ],
            options: [.flag("man", help: "Print the manual page hkq(1) in roff instead, e.g. hkq help --man > hkq.1.")])
    }

    /// Prints the help screen (or with `--man` the whole manual page); an unknown command name is a usage error.
    public func run(_ context: CommandContext) async throws {
        let formatter = context.program.helpFormatter
        let path = context.arguments.positionals
        if context.arguments.flag("man") {
            guard path.isEmpty else { throw context.usageError("--man prints the whole manual; name no command") }
            context.console.out.write(ManPage(program: context.program).roff)
            return
        }
        guard let chain = formatter.resolve(path) else {
            throw UsageError("unknown command '\(path.joined(separator: " "))'")
        }
        context.console.out.write(formatter.help(for: chain))
    }
}
