/// XML character and entity references in attribute values: `&amp; &lt; &gt; &quot; &apos; &#NN; &#xNN;`.
enum XMLReferences {
    /// Longest reference accepted, `&` to `;` inclusive (`&#x10FFFF;` is 10 bytes).
    static let maxLength = 12

    /// Decodes the reference starting with `&` at `start` in `bytes`: the Unicode scalar and the offset just
    /// past its `;`, or `nil` when it is not a well-formed reference to a valid XML character.
    static func scalar(in bytes: ByteSpan, at start: Int) -> (scalar: Unicode.Scalar, end: Int)? {
        // Fast path for the two references every device description is full of.
        if start + 3 < bytes.count, bytes[start + 2] == 0x74, bytes[start + 3] == ASCII.semicolon {
            if bytes[start + 1] == 0x6C { return ("<", start + 4) }  // &lt;
            if bytes[start + 1] == 0x67 { return (">", start + 4) }  // &gt;
        }
        var semicolon = start + 1
        let limit = min(bytes.count, start + maxLength)
        while semicolon < limit, bytes[semicolon] != ASCII.semicolon { semicolon += 1 }
        guard semicolon < limit else { return nil }
        let body = bytes.slice(start + 1..<semicolon)
        let end = semicolon + 1
        if body.equals("amp") { return ("&", end) }
        if body.equals("lt") { return ("<", end) }
        if body.equals("gt") { return (">", end) }
        if body.equals("quot") { return ("\"", end) }
        if body.equals("apos") { return ("'", end) }
        guard body.count >= 2, body[0] == ASCII.hash else { return nil }
        var value: UInt32 = 0
        if body[1] == 0x78 {  // "x": hexadecimal
            guard body.count >= 3 else { return nil }
            for byte in body[2...] {
                guard let digit = hexDigit(byte) else { return nil }
                value = value << 4 | digit
            }
        } else {
            for byte in body[1...] {
                guard ASCII.isDigit(byte) else { return nil }
                value = value * 10 + UInt32(byte - ASCII.zero)
            }
        }
        // At most 8 digits fit maxLength, so value cannot overflow; XML forbids NUL and most control characters.
        guard value >= 0x20 || value == 0x9 || value == 0xA || value == 0xD, let scalar = Unicode.Scalar(value),
            value != 0xFFFE, value != 0xFFFF
        else { return nil }
        return (scalar, end)
    }

    /// Appends `bytes` to `output` with every reference replaced by its character; `false` (output partly
    /// written) when a reference is malformed.
    static func decode(_ bytes: ByteSpan, into output: inout [UInt8]) -> Bool {
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte != ASCII.ampersand {
                output.append(byte)
                i += 1
                continue
            }
            guard let (scalar, end) = scalar(in: bytes, at: i) else { return false }
            output.append(contentsOf: UTF8.encode(scalar)!)
            i = end
        }
        return true
    }

    /// The offset of the first malformed reference in `bytes`, or `nil` when all are well formed.
    static func firstInvalid(in bytes: ByteSpan) -> Int? {
        var i = 0
        while i < bytes.count {
            if bytes[i] == ASCII.ampersand {
                guard let (_, end) = scalar(in: bytes, at: i) else { return i }
                i = end
            } else {
                i += 1
            }
        }
        return nil
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }
}
