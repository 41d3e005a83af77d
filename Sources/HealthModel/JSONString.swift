/// JSON string literals, written alike by hkd's JSON log (`--log-format json`) and hkq's JSON output.
///
/// `"` and `\` are escaped; line feed, carriage return and tab are written `\n`, `\r`, `\t`, the other controls
/// below U+0020 as `\u00XX` (lowercase hex); everything else, U+007F and non-ASCII included, stands as itself.
package enum JSONString {
    /// `string` as a JSON string literal, quotes included.
    package static func quoted(_ string: String) -> String {
        var text = ""
        append(string, to: &text)
        return text
    }

    /// Appends `string` to `text` as a JSON string literal, quotes included.
    package static func append(_ string: String, to text: inout String) {
        text += "\""
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            // Nothing to escape (the common case): one append instead of one per scalar.
            text += string
            text += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
