/// How results are printed: the global `--format` option.
public enum OutputFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Aligned columns for people.
    case table
    /// JSON for programs.
    case json
    /// Comma-separated values for spreadsheets.
    case csv
    /// A horizontal bar chart in the terminal, for commands that draw one (`collection`); others refuse it.
    case chart

    /// The option value, e.g. `json`.
    public var description: String { rawValue }
}
