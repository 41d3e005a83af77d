/// A named option a command accepts: `--name <value>` or, without a value name, a flag `--name`.
///
/// Names are kebab-case without the dashes (`server`, `start-date`). Values may follow as the next word or
/// after `=` (`--format json`, `--format=json`).
public struct OptionSpec: Sendable {
    /// The long name without dashes, e.g. `format`.
    public var name: String
    /// The placeholder shown in help, e.g. `host:port`; `nil` for a flag.
    public var valueName: String?
    /// One line for the help screen.
    public var help: String
    /// When set, the only values accepted (a usage error names them otherwise).
    public var allowedValues: [String]?

    /// An option taking a value.
    public static func option(
        _ name: String, value: String, help: String, allowedValues: [String]? = nil
    ) -> OptionSpec {
        OptionSpec(name: name, valueName: value, help: help, allowedValues: allowedValues)
    }

    /// A flag: present or absent, no value.
    public static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help, allowedValues: nil)
    }

    /// Whether the option is a flag (takes no value).
    public var isFlag: Bool { valueName == nil }

    /// How the option appears in usage lines and help: `--format <format>` or `--verbose`.
    public var synopsis: String { valueName.map { "--\(name) <\($0)>" } ?? "--\(name)" }
}

/// A positional argument of a command, e.g. `<value>` of `units convert`.
public struct ArgumentSpec: Sendable {
    /// The placeholder, lower-case, e.g. `value`.
    public var name: String
    /// One line for the help screen.
    public var help: String
    /// Whether it may be left out (only trailing arguments should be optional).
    public var isOptional: Bool
    /// Whether it takes every remaining word (only the last argument may).
    public var isVariadic: Bool
    /// When set, the only values accepted (a usage error names them otherwise); completion offers them.
    public var allowedValues: [String]?

    /// A positional argument; required and single unless stated.
    public init(
        _ name: String, help: String, isOptional: Bool = false, isVariadic: Bool = false, allowedValues: [String]? = nil
    ) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.isVariadic = isVariadic
        self.allowedValues = allowedValues
    }

    /// How the argument appears in usage lines: `<value>`, `[<value>]`, `<value> ...`.
    public var synopsis: String {
        let core = "<\(name)>" + (isVariadic ? " ..." : "")
        return isOptional ? "[\(core)]" : core
    }
}
