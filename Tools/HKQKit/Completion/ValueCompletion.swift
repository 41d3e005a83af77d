import HealthModel

/// What a shell may offer for an option's value or a positional argument.
public enum ValueCompletion: Equatable, Sendable {
    /// Nothing to offer (a number, a date, a name).
    case none
    /// Exactly these words (the spec's allowed values).
    case words([String])
    /// The quantity type identifiers of ``HealthModel/QuantityType/all``.
    case quantityTypes
    /// Local file names.
    case files
    /// Local directory names.
    case directories

    /// What an option's value completes to; `nil` for a flag, which takes no value.
    ///
    /// Allowed values when the spec lists them, file names for a `<path>` or `<file>` value, else nothing.
    public static func of(_ option: OptionSpec) -> ValueCompletion? {
        guard let valueName = option.valueName else { return nil }
        if let allowed = option.allowedValues { return .words(allowed) }
        return placeholder(valueName) ?? ValueCompletion.none
    }

    /// What a positional argument completes to: allowed values when the spec lists them, quantity types for
    /// `<type>`/`<types>`, every characteristic with each of its values for `<key=value>` (`biologicalSex=female`,
    /// `dateOfBirth=`), file or directory names for `<file>`, `<path>` or `<directory>`, else nothing.
    public static func of(_ argument: ArgumentSpec) -> ValueCompletion {
        if let allowed = argument.allowedValues { return .words(allowed) }
        if argument.name == "type" || argument.name == "types" { return .quantityTypes }
        if argument.name == "key=value" {
            return .words(
                CharacteristicKey.allCases.flatMap { key in
                    (key.knownValues ?? [""]).map { "\(key.rawValue)=\($0)" }
                })
        }
        return placeholder(argument.name) ?? ValueCompletion.none
    }

    /// Files or directories for the placeholders that name them.
    private static func placeholder(_ name: String) -> ValueCompletion? {
        switch name {
        case "file", "path": .files
        case "directory": .directories
        default: nil
        }
    }

    /// The word the generated scripts switch on: `none`, `words a b c`, `types`, `files` or `dirs`.
    var token: String {
        switch self {
        case .none: "none"
        case .words(let words): (["words"] + words).joined(separator: " ")
        case .quantityTypes: "types"
        case .files: "files"
        case .directories: "dirs"
        }
    }
}
