/// Shortens the `device` attribute of a record.
///
/// Exports describe the device as `<<HKDevice: 0x11938b8e0>, name:iPhone, manufacturer:Apple, model:iPhone,
/// hardware:iPhone6,1, software:9.2.1>`. The leading object address changes on every record, so keeping the
/// string whole would make every record a source of its own. The importer keeps the hardware model
/// (`iPhone6,1`, as ``HealthModel/SourceInfo/device`` documents), else the model, else the name; a device
/// string in any other form is kept whole, cut to ``maxLength`` bytes.
enum DeviceDescription {
    /// Longest device description kept, in bytes.
    static let maxLength = 256

    /// The short form of the decoded `device` value `text`, as a sub-span of it.
    static func shortForm(_ text: ByteSpan) -> ByteSpan {
        guard text.hasPrefix("<<HKDevice:") else { return text.slice(0..<min(text.count, maxLength)) }
        for key: StaticString in ["hardware:", "model:", "name:"] {
            if let value = field(key, in: text) { return value }
        }
        return ByteSpan(start: nil, count: 0)
    }

    /// The part of a raw (still escaped) device value that every record of one device shares: what follows the
    /// object address (`, name:iPhone, …&gt;`), or the whole value when it has none. Sources are interned by it,
    /// so the short form is worked out once per device, not once per record.
    static func stablePart(ofRaw raw: ByteSpan) -> ByteSpan {
        let prefix: StaticString = "&lt;&lt;HKDevice:"
        guard raw.hasPrefix(prefix) else { return raw }
        var i = prefix.utf8CodeUnitCount
        while i + 4 <= raw.count {
            if raw[i] == ASCII.ampersand, raw.slice(i..<i + 4).equals("&gt;") { return raw.slice(i + 4..<raw.count) }
            i += 1
        }
        return raw
    }

    /// The value of `key` (written with its colon) in the `, key:value, …>` list, ending at `, ` or the final `>`.
    private static func field(_ key: StaticString, in text: ByteSpan) -> ByteSpan? {
        let keyLength = key.utf8CodeUnitCount
        var i = 0
        while i + 2 + keyLength <= text.count {
            if text[i] == ASCII.comma, text[i + 1] == ASCII.space, text.slice(i + 2..<i + 2 + keyLength).equals(key) {
                let start = i + 2 + keyLength
                var end = start
                while end < text.count {
                    if text[end] == ASCII.comma, end + 1 < text.count, text[end + 1] == ASCII.space { break }
                    if text[end] == ASCII.greaterThan, end == text.count - 1 { break }
                    end += 1
                }
                let value = text.slice(start..<min(end, start + maxLength))
                return value.isEmpty ? nil : value
            }
            i += 1
        }
        return nil
    }
}
