import HealthModel

/// Writes compact JSON (as ``JSONValue/rendered`` writes it) value by value into one byte buffer: a listing of
/// thousands of objects costs one growing buffer, not a string per value and a concatenation per key.
///
/// The writer puts the commas between the members of an object and the elements of an array; the caller opens and
/// closes the containers and names each member's key before its value. ``raw(_:)`` adds layout between top-level
/// values (hkq's one object a line).
struct JSONWriter {
    /// The text so far, UTF-8.
    private(set) var bytes: [UInt8] = []
    /// Whether the next value or key follows another in its container (a comma before it).
    private var needsComma = false

    /// An empty writer with room for about `capacity` bytes.
    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// The text written, as a string.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Hands the bytes written so far to `sink` and starts again from none, keeping the buffer (see
    /// ``CSVWriter/flush(_:)``); ranges a value method returned before no longer hold.
    mutating func flush(_ sink: (UnsafeRawBufferPointer) -> Void) {
        bytes.withUnsafeBytes(sink)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends ASCII `text` as it is, outside any value (a line break, an indent, an array's bracket on its own
    /// line); the next value or key starts afresh, without a comma.
    mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        needsComma = false
    }

    /// Opens an object: keys and values follow, then ``endObject()``.
    mutating func beginObject() {
        beginValue()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Closes the object opened last.
    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Opens an array: values follow, then ``endArray()``.
    mutating func beginArray() {
        beginValue()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Closes the array opened last.
    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Names the next member of the open object: its value follows.
    mutating func key(_ name: String) {
        beginValue()
        JSONString.append(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Names the next member with a key as ``key(_:)`` wrote it before (`"name":`, colon included): keys that
    /// repeat in every object of a listing are escaped once.
    mutating func key(encoded: UnsafeBufferPointer<UInt8>) {
        beginValue()
        bytes.append(contentsOf: encoded)
        needsComma = false
    }

    /// Appends a value as a value method wrote it before (a string literal that repeats in every object of a
    /// listing).
    mutating func value(encoded: UnsafeBufferPointer<UInt8>) {
        beginValue()
        bytes.append(contentsOf: encoded)
        needsComma = true
    }

    /// `null`.
    mutating func null() {
        beginValue()
        append("null")
        needsComma = true
    }

    /// `true` or `false`.
    mutating func bool(_ value: Bool) {
        beginValue()
        append(value ? "true" : "false")
        needsComma = true
    }

    /// `value` in ``NumberFormat/shortest(_:)`` form; `null` when it is not finite.
    mutating func number(_ value: Double) {
        guard value.isFinite else { return null() }
        if let integer = NumberFormat.shortestInteger(value) { return self.integer(integer) }
        beginValue()
        var text = value.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
        needsComma = true
    }

    /// `value` in decimal.
    mutating func integer(_ value: Int64) {
        beginValue()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // An Int64 has at most 19 digits, written from the last.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest != 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
        needsComma = true
    }

    /// `value` as a string literal (``JSONString``'s escaping).
    mutating func string(_ value: String) {
        beginValue()
        JSONString.append(value, to: &bytes)
        needsComma = true
    }

    /// A string the caller knows needs no escaping (digits, instants), its text written by `write` into a buffer
    /// of `capacity` bytes; `write` returns how many it wrote. Returns where the value's bytes (quotes included)
    /// lie, for ``repeatValue(_:)``.
    @discardableResult
    mutating func plainString(capacity: Int, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Int) -> Range<Int> {
        beginValue()
        let start = bytes.count
        bytes.append(UInt8(ascii: "\""))
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            let count = write(buffer)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
        return start..<bytes.count
    }

    /// Appends a copy of a value written before (`range`, as ``plainString(capacity:_:)`` or ``value(_:)``
    /// returned it): an instant that ends one bucket and starts the next is formatted once.
    mutating func repeatValue(_ range: Range<Int>) {
        beginValue()
        // Through a copy: appending a slice of the array to itself would copy the whole array first.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: range.count) { copy in
            _ = bytes.withUnsafeBufferPointer { copy.initialize(fromContentsOf: $0[range]) }
            bytes.append(contentsOf: copy)
        }
        needsComma = true
    }

    /// Appends `value` as ``JSONValue/rendered`` writes it; returns where its bytes lie.
    @discardableResult
    mutating func value(_ value: JSONValue) -> Range<Int> {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = false
        let start = bytes.count
        switch value {
        case .null: null()
        case .bool(let value): bool(value)
        case .number(let value): number(value)
        case .integer(let value): integer(value)
        case .string(let value): string(value)
        case .array(let values):
            beginArray()
            for element in values { self.value(element) }
            endArray()
        case .object(let pairs):
            beginObject()
            for (name, element) in pairs {
                key(name)
                self.value(element)
            }
            endObject()
        }
        return start..<bytes.count
    }

    /// Writes the comma before a value or key that follows another in its container.
    @inline(__always)
    private mutating func beginValue() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
