/// `hkq completion bash|zsh|fish`: prints a shell completion script generated from the command table.
public struct CompletionCommand: Command {
    /// A completion command.
    public init() {}

    /// `completion <shell>`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "completion", abstract: "Print a shell completion script for bash, zsh or fish.",
            discussion: """
                The script completes commands, subcommands, options, their listed values and quantity types. \
                Install it with, e.g., 'hkq completion bash > /etc/bash_completion.d/hkq', \
                'hkq completion zsh > "${fpath[1]}/_hkq"' or 'hkq completion fish > ~/.config/fish/completions/hkq.fish'.
                """,
            arguments: [
                ArgumentSpec("shell", help: "bash, zsh or fish.", allowedValues: Shell.allCases.map(\.rawValue))
            ])
    }

    /// Prints the script for the shell named (the parser has checked the name).
    public func run(_ context: CommandContext) async throws {
        let shell = Shell(rawValue: context.argument(0)!)!
        context.console.out.write(CompletionScript(program: context.program).script(for: shell))
    }
}
