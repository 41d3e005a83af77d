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
        var writer = CSVWriter()
        writer.line(fields)
        return writer.text
    }

    /// The escaped fields joined by commas, without a line end (for printers that add their own).
    public static func joined(_ fields: [String]) -> String {
        var writer = CSVWriter()
        for field in fields { writer.field(field) }
        return writer.text
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

/// Writes CSV text (``CSV``'s quoting, `\n` line ends) field by field into one byte buffer: a listing of
/// thousands of rows costs one growing buffer, not a string per cell and a concatenation per field.
struct CSVWriter {
    /// The text so far, UTF-8.
    private(set) var bytes: [UInt8] = []
    /// Whether the next field starts a line (no comma before it).
    private var atLineStart = true

    /// An empty writer with room for about `capacity` bytes.
    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// The text written, as a string.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Hands the bytes written so far to `sink` and starts again from none, keeping the buffer: a long listing
    /// written in chunks touches one chunk's memory, not the whole text's. Call it at a line's end; ranges a field
    /// method returned before no longer hold.
    mutating func flush(_ sink: (UnsafeRawBufferPointer) -> Void) {
        bytes.withUnsafeBytes(sink)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends `field`, quoted when ``CSV/escape(_:)`` would quote it; returns where its bytes lie.
    @discardableResult
    mutating func field(_ field: String) -> Range<Int> {
        unquotedField(CSV.escape(field))
    }

    /// Appends `cell` as ``JSONValue/plainText`` shows it (null is an empty field); returns where its bytes lie.
    @discardableResult
    mutating func field(_ cell: JSONValue) -> Range<Int> {
        switch cell {
        case .null: unquotedField("")
        // Numbers never hold a comma, quote or space.
        case .number, .integer, .bool: unquotedField(cell.plainText)
        case .string(let text): field(text)
        case .array, .object: field(cell.rendered)
        }
    }

    /// Appends a field the caller knows needs no quotes (digits, instants), written by `write` into a buffer of
    /// `capacity` bytes; `write` returns how many it wrote. Returns where the field's bytes lie.
    @discardableResult
    mutating func unquotedField(capacity: Int, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Int) -> Range<Int> {
        let start = beginField()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            let count = write(buffer)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
        return start..<bytes.count
    }

    /// Appends a copy of a field written before (`range`, as a field method returned it): an instant that ends
    /// one row and starts the next is formatted once.
    mutating func repeatField(_ range: Range<Int>) {
        beginField()
        // Through a copy: appending a slice of the array to itself would copy the whole array first.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: range.count) { copy in
            _ = bytes.withUnsafeBufferPointer { copy.initialize(fromContentsOf: $0[range]) }
            bytes.append(contentsOf: copy)
        }
    }

    /// Ends the line.
    mutating func endLine() {
        bytes.append(UInt8(ascii: "\n"))
        atLineStart = true
    }

    /// Appends a whole line of fields.
    mutating func line<Fields: Sequence<String>>(_ fields: Fields) {
        for field in fields { self.field(field) }
        endLine()
    }

    private mutating func unquotedField(_ text: String) -> Range<Int> {
        let start = beginField()
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
        return start..<bytes.count
    }

    /// Writes the comma before a field that does not start its line; returns where the field starts.
    @discardableResult
    private mutating func beginField() -> Int {
        if !atLineStart { bytes.append(UInt8(ascii: ",")) }
        atLineStart = false
        return bytes.count
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
