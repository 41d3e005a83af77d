import HealthModel

/// The environment variables hkq reads, as ``GlobalOptions/resolve(options:environment:commandPath:)`` uses
/// them; the man page's ENVIRONMENT section.
extension GlobalOptions {
    /// Each variable and what it sets, in the order they are consulted.
    public static let environmentVariables: [(name: String, help: String)] = [
        (
            "HKQ_SERVER",
            "The hkd server as host:port, [v6]:port or a host alone (port 7420), when --server is not given."
        ),
        ("HKQ_SUBJECT", "The person whose data to use when --subject is not given (default: me)."),
        ("HKQ_TOKEN", "The access token when neither --token nor --token-file is given."),
        (
            "HKQ_TOKEN_FILE",
            "A file whose first line is the access token, when no token is given otherwise; keeps it out of ps and shell history."
        ),
        ("HKQ_TLS", "1, true or yes: connect with TLS, as --tls."),
        ("HKQ_TLS_CA", "The PEM file of authorities to trust, as --tls-ca."),
        ("HKQ_TLS_FINGERPRINT", "The pinned SHA-256 fingerprint of the server's certificate, as --tls-fingerprint."),
        ("HKQ_TLS_CERT", "The client certificate, as --tls-cert."),
        ("HKQ_TLS_KEY", "The client certificate's key, as --tls-key."),
        ("HKQ_RETRY_FOR", "Seconds to keep retrying a server that cannot be reached, as --retry-for."),
        (
            "HKQ_PAGER",
            "The program a listing longer than the terminal is paged through (run by sh -c); empty or cat: none."
        ),
        ("PAGER", "The pager when HKQ_PAGER is not set (default: less, with LESS=FRX unless LESS is set)."),
        ("COLUMNS", "The width --format chart fits its lines to (default: the terminal's, else 80)."),
    ]
}

/// hkq(1) in roff (`man` macros), built from the same command table and specs as `--help`.
public struct ManPage: Sendable {
    /// The program: name, overview, commands and global options.
    public var program: HKQ

    /// The man page of `program`.
    public init(program: HKQ) { self.program = program }

    /// The whole page: NAME, SYNOPSIS, DESCRIPTION, COMMANDS, GLOBAL OPTIONS, ENVIRONMENT, EXIT STATUS, SEE ALSO.
    public var roff: String {
        let name = program.name
        let formatter = program.helpFormatter
        var lines = [
            #".TH \#(ManPage.escape(name.uppercased())) 1 "" "\#(ManPage.escape("\(name) \(ProjectVersion.current)"))" "User Commands""#,
            ".SH NAME",
            "\(ManPage.escape(name)) \\- \(ManPage.escape(program.overview))",
            ".SH SYNOPSIS",
            ".B \(ManPage.escape(name))",
            #"[\fIglobal\-options\fR] \fIcommand\fR [\fIoptions\fR] [\fIarguments\fR]"#,
            ".br",
            ".B \(ManPage.escape(name)) help \\-\\-man",
            ".SH DESCRIPTION",
            ManPage.escape(program.overview),
            ".PP",
            ManPage.escape(
                "Global options are accepted before and after the command name. '\(name) help COMMAND' or "
                    + "'\(name) COMMAND --help' prints the help of one command."),
            ".SH COMMANDS",
        ]
        for entry in CommandTable(commands: program.commands).entries {
            let spec = entry.spec
            lines.append(".SS \"\(ManPage.escape(entry.words))\"")
            lines.append(ManPage.escape(formatter.usage(for: entry.chain)))
            lines.append(".PP")
            lines.append(ManPage.escape(spec.abstract))
            if let discussion = spec.discussion { lines += ManPage.paragraphs(discussion) }
            if !spec.subcommands.isEmpty {
                lines.append(".PP")
                lines.append(
                    ManPage.escape("Subcommands: " + spec.subcommands.map(\.spec.name).joined(separator: ", ") + "."))
            }
            for argument in spec.arguments {
                lines += [".TP", #"\fI"# + ManPage.escape(argument.synopsis) + #"\fR"#, ManPage.escape(argument.help)]
            }
            for option in spec.options { lines += ManPage.item(option) }
        }
        lines.append(".SH GLOBAL OPTIONS")
        for option in program.globalOptions { lines += ManPage.item(option) }
        lines += [".TP", #"\fB\-h\fR, \fB\-\-help\fR"#, "Show help information."]
        lines += [
            ".TP", #"\fB\-\-version\fR"#, ManPage.escape(HelpFormatter.versionHelp + " Before any command only."),
        ]
        lines.append(".SH ENVIRONMENT")
        for variable in GlobalOptions.environmentVariables {
            lines += [".TP", ".B \(variable.name)", ManPage.escape(variable.help)]
        }
        lines.append(".SH EXIT STATUS")
        for status in ExitStatus.allCases {
            lines += [".TP", ".B \(status.rawValue)", ManPage.escape(status.meaning)]
        }
        lines += [
            ".SH SEE ALSO",
            ".BR hkd (1),",
            ManPage.escape("'\(name) completion bash|zsh|fish' for shell completion."),
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// An option as a tagged paragraph: `\fB\-\-name\fR \fIvalue\fR`, its help, and its allowed values.
    static func item(_ option: OptionSpec) -> [String] {
        var tag = #"\fB\-\-"# + escape(option.name) + #"\fR"#
        if let value = option.valueName { tag += #" \fI"# + escape(value) + #"\fR"# }
        var help = option.help
        if let allowed = option.allowedValues { help += " One of: " + allowed.joined(separator: ", ") + "." }
        return [".TP", tag, escape(help)]
    }

    /// Discussion text as paragraphs: a blank line starts a new `.PP`; other line breaks are kept with `.br`.
    static func paragraphs(_ text: String) -> [String] {
        text.components(separatedBy: "\n\n").flatMap { paragraph -> [String] in
            let lines = paragraph.split(separator: "\n").map { escape(String($0)) }
            return [".PP"] + lines.enumerated().flatMap { $0.offset == 0 ? [$0.element] : [".br", $0.element] }
        }
    }

    /// `text` safe as roff body text: backslashes as `\e`, hyphens as `\-` (so options copy as typed), characters
    /// beyond ASCII as `\[uXXXX]` (troff reads Latin-1), and a line starting with `.` or `'` (a request otherwise)
    /// guarded with `\&`.
    public static func escape(_ text: String) -> String {
        var body = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": body += #"\e"#
            case "-": body += #"\-"#
            case _ where scalar.isASCII: body.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                body += #"\[u"# + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        return body.hasPrefix(".") || body.hasPrefix("'") ? #"\&"# + body : body
    }
}
