import HealthModel

/// The options, flags and positional arguments given to one command.
public struct ParsedArguments: Sendable, Equatable {
    /// Every value given for each option, in order, keyed by option name without dashes.
    public var options: [String: [String]] = [:]
    /// The flags present, by name without dashes.
    public var flags: Set<String> = []
    /// The positional arguments, in order.
    public var positionals: [String] = []

    /// Nothing given.
    public init() {}

    /// The last value given for option `name`, if any.
    public func value(_ name: String) -> String? { options[name]?.last }

    /// Every value given for option `name` (repeatable options such as `--source A --source B`).
    public func values(_ name: String) -> [String] { options[name] ?? [] }

    /// Whether flag `name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// A parsed command line: the command chosen (by path from the top) and what it was given.
public struct CommandLineParse: Sendable {
    /// The chosen command and its parents, outermost first; empty when only global options were given.
    public var commands: [any Command]
    /// Options (global ones included), flags and positional arguments.
    public var arguments: ParsedArguments
    /// Whether `-h` or `--help` was given.
    public var wantsHelp: Bool
    /// Whether `--version` was given (only before a command: it takes none).
    public var wantsVersion = false

    /// The names of ``commands``, e.g. `["units", "convert"]`.
    public var path: [String] { commands.map(\.spec.name) }
}

/// hkq's own argument parser, following swift-argument-parser's conventions.
///
/// Words are read left to right. A word that names a subcommand of the current command selects it (only before
/// the first positional argument); `--name value`, `--name=value` and `--flag` are options of the current
/// command or global ones (global ones are valid anywhere); `-h`/`--help` asks for help, `--version` (with no
/// command) for the version; `--` ends options;
/// a word starting with `-` followed by a digit or `.` is a (negative) number, not an option.
public struct ArgumentParser: Sendable {
    /// The top-level commands.
    public var commands: [any Command]
    /// Options valid before and after any command name.
    public var globalOptions: [OptionSpec]

    /// A parser over the given commands and global options.
    public init(commands: [any Command], globalOptions: [OptionSpec]) {
        self.commands = commands
        self.globalOptions = globalOptions
    }

    /// Parses `words` (the process arguments after the program name).
    ///
    /// Throws ``UsageError`` for an unknown command or option, a missing or disallowed option value, or a wrong
    /// number of positional arguments (not checked when help was asked for).
    public func parse(_ words: [String]) throws -> CommandLineParse {
        var chain: [any Command] = []
        var arguments = ParsedArguments()
        var wantsHelp = false
        var wantsVersion = false
        var optionsEnded = false
        var index = 0
        func path() -> [String] { chain.map(\.spec.name) }

        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !ArgumentParser.looksLikeOption(word) {
                let subcommands = chain.last?.spec.subcommands ?? commands
                if !optionsEnded, arguments.positionals.isEmpty, !subcommands.isEmpty {
                    guard let next = subcommands.first(where: { $0.spec.name == word }) else {
                        let kind = chain.isEmpty ? "command" : "subcommand"
                        let hint =
                            Suggestion.nearest(to: word, among: subcommands.map(\.spec.name))
                            .map { "; did you mean '\($0)'?" } ?? ""
                        throw UsageError("unknown \(kind) '\(word)'\(hint)", commandPath: path())
                    }
                    chain.append(next)
                    continue
                }
                arguments.positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            if word == "-h" || word == "--help" {
                wantsHelp = true
                continue
            }
            if word == "--version", chain.isEmpty {
                wantsVersion = true
                continue
            }
            guard word.hasPrefix("--") else { throw UsageError("unknown option '\(word)'", commandPath: path()) }
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            let known = (chain.last?.spec.options ?? []) + globalOptions
            guard let spec = known.first(where: { $0.name == name }) else {
                let hint =
                    Suggestion.nearest(to: name, among: known.map(\.name)).map { "; did you mean '--\($0)'?" } ?? ""
                throw UsageError("unknown option '--\(name)'\(hint)", commandPath: path())
            }
            if spec.isFlag {
                if inline != nil { throw UsageError("flag '--\(name)' takes no value", commandPath: path()) }
                arguments.flags.insert(name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else if index < words.count, !words[index].hasPrefix("--") {
                value = words[index]
                index += 1
            } else {
                throw UsageError("missing value for option '\(spec.synopsis)'", commandPath: path())
            }
            if let allowed = spec.allowedValues, !allowed.contains(value) {
                throw UsageError(
                    "invalid value '\(value)' for '--\(name)'; expected \(ArgumentParser.list(allowed))",
                    commandPath: path())
            }
            arguments.options[name, default: []].append(value)
        }
        if wantsVersion, !chain.isEmpty {
            throw UsageError("'--version' takes no command", commandPath: path())
        }
        let parse = CommandLineParse(
            commands: chain, arguments: arguments, wantsHelp: wantsHelp, wantsVersion: wantsVersion)
        if !wantsHelp, !wantsVersion { try checkArity(parse) }
        return parse
    }

    /// Checks that the chosen command is runnable and got the number of positional arguments it declares.
    func checkArity(_ parse: CommandLineParse) throws {
        guard let command = parse.commands.last else { throw UsageError("missing command") }
        let spec = command.spec
        if !spec.subcommands.isEmpty, !spec.runsWithoutSubcommand {
            throw UsageError("missing subcommand", commandPath: parse.path)
        }
        let given = parse.arguments.positionals
        let required = spec.arguments.filter { !$0.isOptional }.count
        if given.count < required {
            let missing = spec.arguments[given.count]
            throw UsageError("missing argument '<\(missing.name)>'", commandPath: parse.path)
        }
        let variadic = spec.arguments.last?.isVariadic ?? false
        if !variadic, given.count > spec.arguments.count {
            throw UsageError("unexpected argument '\(given[spec.arguments.count])'", commandPath: parse.path)
        }
        for (index, value) in given.enumerated() {
            // Words past the last argument belong to it (it is variadic, or the count check above threw).
            let argument = spec.arguments[min(index, spec.arguments.count - 1)]
            if let allowed = argument.allowedValues, !allowed.contains(value) {
                throw UsageError(
                    "invalid value '\(value)' for '<\(argument.name)>'; expected \(ArgumentParser.list(allowed))",
                    commandPath: parse.path)
            }
        }
    }

    /// Whether `word` is an option rather than a value: it starts with `-` and is not a number such as `-40`.
    static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let second = word[word.index(after: word.startIndex)]
        return !(second.isASCII && (second.isNumber || second == "."))
    }

    /// `a, b or c`.
    static func list(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " or " + items.last!
    }
}
