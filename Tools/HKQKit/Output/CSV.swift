/// Comma-separated values in the style of RFC 4180, with `\n` line ends.
public enum CSV {
    /// `field` as one CSV cell: quoted (with quotes doubled) when it holds a comma, quote, line break, or
    /// leading or trailing space.
    public static func escape(_ field: String) -> String {
        let needsQuotes =
            field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            || field.hasPrefix(" ") || field.hasSuffix(" ")
        guard needsQuotes else { return field }
        return "\"" + field.replacingAll("\"", with: "\"\"") + "\""
    }

    /// One line: the escaped fields joined by commas, with a final newline.
    public static func line(_ fields: [String]) -> String { fields.map(escape).joined(separator: ",") + "\n" }
}

extension String {
    /// Every occurrence of `target` replaced, without Foundation.
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
