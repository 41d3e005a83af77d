/// Byte views the export parser hands around: an `UnsafeBufferPointer<UInt8>` into the tokenizer's window.
///
/// A span is valid only until the tokenizer is fed again; copy what must outlive the current tag.
typealias ByteSpan = UnsafeBufferPointer<UInt8>

extension UnsafeBufferPointer where Element == UInt8 {
    /// The bytes of a string literal (which live as long as the program).
    init(literal: StaticString) {
        self.init(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    /// Whether the bytes equal the ASCII `literal`.
    @inline(__always)
    func equals(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount, let base = baseAddress else {
            return count == 0 && literal.utf8CodeUnitCount == 0
        }
        let other = literal.utf8Start
        for i in 0..<count where base[i] != other[i] { return false }
        return true
    }

    /// Whether the bytes start with the ASCII `literal`.
    func hasPrefix(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard count >= n, let base = baseAddress else { return n == 0 }
        let other = literal.utf8Start
        for i in 0..<n where base[i] != other[i] { return false }
        return true
    }

    /// The bytes as a String (invalid UTF-8 is repaired with U+FFFD).
    var string: String { String(decoding: self, as: UTF8.self) }

    /// The bytes as a String cut to at most `limit` bytes, for error messages.
    func clipped(_ limit: Int = 80) -> String {
        count <= limit ? string : ByteSpan(rebasing: self[0..<limit]).string + "…"
    }

    /// The sub-span `range` (offsets into this span).
    @inline(__always)
    func slice(_ range: Range<Int>) -> ByteSpan { ByteSpan(rebasing: self[range]) }
}

/// ASCII byte constants used by the scanners.
enum ASCII {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let hash: UInt8 = 0x23
    static let ampersand: UInt8 = 0x26
    static let apostrophe: UInt8 = 0x27
    static let plus: UInt8 = 0x2B
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let lessThan: UInt8 = 0x3C
    static let equals: UInt8 = 0x3D
    static let greaterThan: UInt8 = 0x3E
    static let question: UInt8 = 0x3F
    static let bang: UInt8 = 0x21
    static let leftBracket: UInt8 = 0x5B
    static let rightBracket: UInt8 = 0x5D
    static let upperE: UInt8 = 0x45
    static let lowerE: UInt8 = 0x65
    static let upperZ: UInt8 = 0x5A

    /// XML white space: space, tab, line feed, carriage return.
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == space || byte == newline || byte == tab || byte == carriageReturn
    }

    /// Whether `byte` is an ASCII digit.
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte &- zero < 10 }
}
