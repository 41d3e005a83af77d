/// JSON string literals, written alike by hkd's JSON log (`--log-format json`) and hkq's JSON output.
///
/// `"` and `\` are escaped; line feed, carriage return and tab are written `\n`, `\r`, `\t`, the other controls
/// below U+0020 as `\u00XX` (lowercase hex); everything else, U+007F and non-ASCII included, stands as itself.
/// Every byte to escape is ASCII, so the escaping works on UTF-8 bytes (``append(utf8:to:)``); the string forms
/// go through it.
package enum JSONString {
    /// `string` as a JSON string literal, quotes included.
    package static func quoted(_ string: String) -> String {
        var text = ""
        append(string, to: &text)
        return text
    }

    /// Appends `string` to `text` as a JSON string literal, quotes included.
    package static func append(_ string: String, to text: inout String) {
        if !string.utf8.contains(where: needsEscape) {
            // Nothing to escape (the common case): the string as it is between quotes.
            text += "\""
            text += string
            text += "\""
            return
        }
        var bytes: [UInt8] = []
        append(string, to: &bytes)
        text += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string` to `bytes` as a JSON string literal in UTF-8, quotes included.
    package static func append(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { append(utf8: $0, to: &bytes) }
    }

    /// Appends the UTF-8 text `utf8` to `bytes` as a JSON string literal, quotes included: one copy when no byte
    /// needs escaping (the common case), else byte by byte.
    package static func append(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        guard utf8.contains(where: needsEscape) else {
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")]
                bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether `byte` is escaped inside a literal: a control below U+0020, a quote or a backslash.
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
