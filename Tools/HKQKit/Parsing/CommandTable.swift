/// Every command of a program with its full path, depth first in help order.
///
/// Help, the completion scripts and the man page all read the same ``Command/spec``s through this table, so a
/// command or option added in one place appears in all of them.
public struct CommandTable: Sendable {
    /// One command and the commands above it.
    public struct Entry: Sendable {
        /// The command and its parents, outermost first (what ``HelpFormatter/usage(for:)`` takes).
        public var chain: [any Command]
        /// The command's spec.
        public var spec: CommandSpec { chain.last!.spec }
        /// The names along the chain, e.g. `["units", "convert"]`.
        public var path: [String] { chain.map(\.spec.name) }
        /// The path as one string, e.g. `units convert`.
        public var words: String { path.joined(separator: " ") }
    }

    /// Every command, groups and their subcommands alike, depth first in help order.
    public var entries: [Entry]

    /// The table of `commands` and all their subcommands.
    public init(commands: [any Command]) {
        var entries: [Entry] = []
        func visit(_ command: any Command, above: [any Command]) {
            let chain = above + [command]
            entries.append(Entry(chain: chain))
            for child in command.spec.subcommands { visit(child, above: chain) }
        }
        for command in commands { visit(command, above: []) }
        self.entries = entries
    }
}
