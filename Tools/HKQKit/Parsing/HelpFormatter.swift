/// Builds help screens and usage lines in swift-argument-parser's layout: OVERVIEW, USAGE, ARGUMENTS,
/// COMMANDS (or SUBCOMMANDS), OPTIONS.
public struct HelpFormatter: Sendable {
    /// The program name, `hkq`.
    public var program: String
    /// One line describing the program, the top-level OVERVIEW.
    public var overview: String
    /// The top-level commands.
    public var commands: [any Command]
    /// Options valid everywhere.
    public var globalOptions: [OptionSpec]

    /// A formatter for `program`.
    public init(program: String, overview: String, commands: [any Command], globalOptions: [OptionSpec]) {
        self.program = program
        self.overview = overview
        self.commands = commands
        self.globalOptions = globalOptions
    }

    /// The help of `--version`, which only the top level takes.
    public static let versionHelp = "Show the version (as the 'version' command)."

    /// Width of the left column of argument, option and command lists.
    static let labelWidth = 24

    /// The commands along `path` (outermost first), or `nil` when a name is unknown.
    public func resolve(_ path: [String]) -> [any Command]? {
        var chain: [any Command] = []
        for name in path {
            let candidates = chain.last?.spec.subcommands ?? commands
            guard let next = candidates.first(where: { $0.spec.name == name }) else { return nil }
            chain.append(next)
        }
        return chain
    }

    /// `hkq units convert [<options>] <value> <from> <to>`, or the top-level usage for an empty path.
    public func usage(for chain: [any Command]) -> String {
        let words = ([program] + chain.map(\.spec.name)).joined(separator: " ")
        guard let spec = chain.last?.spec else { return "\(words) [<options>] <command>" }
        if !spec.subcommands.isEmpty, !spec.runsWithoutSubcommand { return "\(words) <subcommand>" }
        let options = spec.options.map { "[\($0.synopsis)]" }
        let arguments = spec.arguments.map(\.synopsis)
        let subcommand = spec.subcommands.isEmpty ? [] : ["[<subcommand>]"]
        return ([words] + subcommand + options + ["[<global-options>]"] + arguments).joined(separator: " ")
    }

    /// The full help screen of the command at the end of `chain` (the top-level help for an empty chain).
    public func help(for chain: [any Command]) -> String {
        let spec = chain.last?.spec
        var text = "OVERVIEW: \(spec?.abstract ?? overview)\n"
        if let discussion = spec?.discussion { text += "\n\(discussion)\n" }
        text += "\nUSAGE: \(usage(for: chain))\n"
        if let spec, !spec.arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in spec.arguments { text += HelpFormatter.row("<\(argument.name)>", argument.help) }
        }
        let subcommands = spec?.subcommands ?? commands
        if !subcommands.isEmpty {
            text += spec == nil ? "\nCOMMANDS:\n" : "\nSUBCOMMANDS:\n"
            for command in subcommands { text += HelpFormatter.row(command.spec.name, command.spec.abstract) }
        }
        if let spec, !spec.options.isEmpty {
            text += "\nOPTIONS:\n"
            for option in spec.options { text += HelpFormatter.row(option.synopsis, option.help) }
        }
        text += spec == nil ? "\nOPTIONS:\n" : "\nGLOBAL OPTIONS:\n"
        for option in globalOptions { text += HelpFormatter.row(option.synopsis, option.help) }
        text += HelpFormatter.row("-h, --help", "Show help information.")
        if spec == nil { text += HelpFormatter.row("--version", HelpFormatter.versionHelp) }
        if spec == nil {
            text += "\nEXIT STATUS:\n"
            for status in ExitStatus.allCases {
                let code = "\(status.rawValue)"
                text += "  " + code + String(repeating: " ", count: 4 - code.count) + status.meaning + "\n"
            }
        }
        if !subcommands.isEmpty {
            let placeholder = spec == nil ? "<command>" : "<subcommand>"
            let words = ([program, "help"] + chain.map(\.spec.name) + [placeholder]).joined(separator: " ")
            text += "\n  See '\(words)' for detailed help.\n"
        }
        return text
    }

    /// One line of a list: two spaces, the label padded to the column, then the text (on the next line when the
    /// label is too long).
    static func row(_ label: String, _ text: String) -> String {
        let indent = String(repeating: " ", count: labelWidth + 2)
        if label.count >= labelWidth { return "  \(label)\n\(indent)\(text)\n" }
        return "  " + label + String(repeating: " ", count: labelWidth - label.count) + text + "\n"
    }
}
