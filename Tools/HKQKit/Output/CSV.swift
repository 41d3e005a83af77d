/// Comma-separated values in the style of RFC 4180, with `\n` line ends.
public enum CSV {
    /// `field` as one CSV cell: quoted (with quotes doubled) when it holds a comma, quote, line break, or
    /// leading or trailing space.
    public static func escape(_ field: String) -> String {
        needsQuotes(field) ? "\"" + field.replacingAll("\"", with: "\"\"") + "\"" : field
    }

    /// Whether `field` must be quoted: it holds a comma, quote or line break, or starts or ends with a space.
    private static func needsQuotes(_ field: String) -> Bool {
        func special(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == 10 || byte == 13
        }
        let bytes = field.utf8
        if bytes.first == UInt8(ascii: " ") || bytes.last == UInt8(ascii: " ") { return true }
        // Native strings are read in place; others byte by byte.
        return bytes.withContiguousStorageIfAvailable { $0.contains(where: special) } ?? bytes.contains(where: special)
    }

    /// One line: the escaped fields joined by commas, with a final newline.
    public static func line(_ fields: [String]) -> String {
        var text = ""
        appendLine(fields, to: &text)
        return text
    }

    /// Appends ``line(_:)`` of `fields` to `text` (long listings build one string, not one per line).
    static func appendLine<Fields: Sequence<String>>(_ fields: Fields, to text: inout String) {
        appendFields(fields, to: &text)
        text.append("\n")
    }

    /// The escaped fields joined by commas, without a line end (for printers that add their own).
    public static func joined(_ fields: [String]) -> String {
        var text = ""
        appendFields(fields, to: &text)
        return text
    }

    /// Appends the escaped fields joined by commas.
    private static func appendFields<Fields: Sequence<String>>(_ fields: Fields, to text: inout String) {
        var first = true
        for field in fields {
            if !first { text.append(",") }
            first = false
            text.append(escape(field))
        }
    }

    /// The fields of one line (without its line end): commas separate, double quotes enclose a field that may
    /// hold commas, and `""` inside quotes is a quote. `nil` when a quote is left open or text follows a
    /// closing quote. Fields keep their spaces.
    public static func fields(_ line: String) -> [String]? {
        let bytes = line.utf8
        if !bytes.contains(UInt8(ascii: "\"")) {
            // No quotes: the fields are what lies between commas (a comma never sits inside a UTF-8 sequence).
            if bytes.isEmpty { return [""] }
            return bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
        }
        // Unicode scalars, not characters: a quote followed by a combining mark is one `Character`, which would
        // hide the quote.
        var fields: [String] = []
        var field = String.UnicodeScalarView()
        var inQuotes = false
        var wasQuoted = false
        for scalar in line.unicodeScalars {
            if inQuotes {
                if scalar != "\"" {
                    field.append(scalar)
                    continue
                }
                inQuotes = false
                wasQuoted = true
                continue
            }
            switch scalar {
            case ",":
                fields.append(String(field))
                field = String.UnicodeScalarView()
                wasQuoted = false
            case "\"" where wasQuoted:
                field.append("\"")
                inQuotes = true
            case "\"" where field.isEmpty:
                inQuotes = true
            default:
                if wasQuoted { return nil }
                field.append(scalar)
            }
        }
        if inQuotes { return nil }
        fields.append(String(field))
        return fields
    }
}

extension String {
    /// Every occurrence of the scalar `target` replaced, without Foundation. Scalars, not characters: a quote
    /// followed by a combining mark is one `Character` that is not a quote.
    func replacingAll(_ target: Unicode.Scalar, with replacement: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if scalar == target { result.append(contentsOf: replacement.unicodeScalars) } else { result.append(scalar) }
        }
        return String(result)
    }
}
