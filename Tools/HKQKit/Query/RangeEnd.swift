/// The end of a range of days, nights or buckets, with one meaning in every command: `--to` names the first one
/// not listed (exclusive, as `--to` bounds instants in `samples` and `stats`), `--through` the last one listed
/// (inclusive).
///
/// Where `--to` once meant the last one listed (`activity`, `collection`), it keeps that meaning with a
/// deprecation warning naming `--through`.
struct RangeEnd {
    /// The date as typed.
    var text: String
    /// Whether the day, night or bucket `text` names is listed (`--through`) or the first one not listed (`--to`).
    var inclusive: Bool
    /// The option it came from, for messages: `to` or `through`.
    var option: String

    /// The `--through` option's spec: `help` says what the last one listed is.
    static func throughSpec(_ help: String) -> OptionSpec { .option("through", value: "date", help: help) }

    /// `--to` or `--through` of `context`, nil when neither is given; both is a usage error. With
    /// `deprecatedInclusiveTo` (what is listed: `day`, `bucket`), `--to` is read as `--through` after a warning on
    /// standard error.
    static func parse(_ context: CommandContext, deprecatedInclusiveTo noun: String? = nil) throws -> RangeEnd? {
        let to = context.arguments.value("to")
        let through = context.arguments.value("through")
        if to != nil, through != nil { throw context.usageError("--to and --through exclude each other; give one") }
        if let through { return RangeEnd(text: through, inclusive: true, option: "through") }
        guard let to else { return nil }
        if let noun {
            let command = context.commandPath.joined(separator: " ")
            context.console.printError(
                "warning: '\(command) --to' lists the \(noun) it names, unlike --to elsewhere (the first one not "
                    + "listed); this spelling is deprecated: use --through \(to)")
        }
        return RangeEnd(text: to, inclusive: noun != nil, option: "to")
    }
}
