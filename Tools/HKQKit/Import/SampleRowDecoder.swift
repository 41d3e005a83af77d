import Foundation
import HealthModel

/// The text fields of one input row, before validation.
public struct SampleRow: Sendable, Equatable {
    /// Quantity type, short or full identifier.
    public var type: String
    /// ISO 8601 with an offset.
    public var start: String
    /// ISO 8601 with an offset; empty means the same as ``start`` (a point sample).
    public var end: String
    /// The number as written; for a category type the value's name (`asleepCore`) or raw value.
    public var value: String
    /// An HKUnit string; empty means the type's canonical unit (and a category type takes no other).
    public var unit: String
    /// The source name.
    public var source: String
    /// A UUID; empty means one derived from the content (``StableUUID``).
    public var uuid: String
    /// The source's bundle identifier; may be empty.
    public var bundleIdentifier: String
    /// Metadata (JSON lines only).
    public var metadata: [String: MetadataValue]

    /// A row from its fields.
    public init(
        type: String, start: String, end: String, value: String, unit: String, source: String, uuid: String,
        bundleIdentifier: String = "", metadata: [String: MetadataValue] = [:]
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.metadata = metadata
        self.type = type
        self.start = start
        self.end = end
        self.value = value
        self.unit = unit
        self.source = source
        self.uuid = uuid
    }
}

/// Turns rows into validated samples for one subject, caching type and unit lookups.
///
/// Every failure is a ``HealthError`` naming the field; the reader adds the file and line.
public struct SampleRowDecoder {
    /// The subject every sample is stored for.
    public let subject: String
    private var types: [String: QuantityType] = [:]
    private var units: [String: HealthUnit] = [:]

    /// A decoder for `subject`.
    public init(subject: String) { self.subject = subject }

    /// The sample `row` describes, checked against the sample rules (type, unit fits, start ≤ end, finite value,
    /// no negative cumulative value).
    public mutating func sample(_ row: SampleRow) throws -> Sample {
        let type = try lookUp(type: row.type)
        let unit = try lookUp(unit: row.unit, for: type)
        let start = try Self.instant(row.start, field: "start")
        let end = row.end.isEmpty ? start : try Self.instant(row.end, field: "end")
        let value = try Self.value(row.value, type: type)
        let sourceName = row.source.trimmingWhitespace
        if sourceName.isEmpty { throw HealthError(.invalidSample, "the source is empty") }
        if start > end {
            throw HealthError(.invalidSample, "start \(row.start) is after end \(row.end)")
        }
        try SampleRules.validate(type: type, unit: unit, start: start, end: end, value: value, subject: subject)
        let source = SourceInfo(name: sourceName, bundleIdentifier: row.bundleIdentifier.trimmingWhitespace)
        guard row.uuid.isEmpty else {
            guard let parsed = UUID(uuidString: row.uuid.trimmingWhitespace) else {
                throw HealthError(.invalidSample, "uuid \"\(row.uuid)\" is not a UUID")
            }
            return Sample(
                uuid: parsed, subject: subject, type: type, start: start, end: end, value: value, unit: unit,
                source: source, metadata: row.metadata)
        }
        // A derived UUID names the content whatever unit it was written in: the sample is sent as the canonical
        // value its identity is computed on (IdentityValue), so `1 km` and `1000 m` store the same bits.
        guard let canonical = IdentityValue.canonical(value, unit: unit, type: type) else {
            throw HealthError(.invalidSample, "value \(row.value) \(unit.symbol) is out of range for \(type)")
        }
        let uuid = StableUUID.derive(
            subject: subject, type: type, start: start, end: end, canonicalValue: canonical, source: source,
            metadata: row.metadata)
        return Sample(
            uuid: uuid, subject: subject, type: type, start: start, end: end, value: canonical,
            unit: type.canonicalUnit, source: source, metadata: row.metadata)
    }

    private mutating func lookUp(type name: String) throws -> QuantityType {
        if let type = types[name] { return type }
        if name.isEmpty { throw HealthError(.unknownQuantityType, "the type is empty") }
        let type = try QuantityType.named(name)
        types[name] = type
        return type
    }

    /// A quantity value's number; a category value's name (`asleepCore`, `HKCategoryValueSleepAnalysisAsleepCore`)
    /// or raw value as that raw value; no value at all for a not-applicable category type (`mindfulSession`) as
    /// `notApplicable`, the export importer's rule.
    static func value(_ text: String, type: QuantityType) throws -> Double {
        let trimmed = text.trimmingWhitespace
        if let values = type.categoryValues {
            if trimmed.isEmpty, let implied = values.valueWhenAbsent { return Double(implied) }
            guard let raw = values.rawValue(named: trimmed) else {
                throw HealthError(
                    .invalidSample,
                    "value \"\(text)\" is not a value of category type \(type) (\(values.enumeration): \(values.listing))"
                )
            }
            return Double(raw)
        }
        guard let value = Double(trimmed) else {
            throw HealthError(.invalidSample, "value \"\(text)\" is not a number")
        }
        return value
    }

    private mutating func lookUp(unit symbol: String, for type: QuantityType) throws -> HealthUnit {
        if symbol.isEmpty { return type.canonicalUnit }
        if type.isCategory { return try type.unit(parsing: symbol) }
        if let unit = units[symbol] { return unit }
        let unit = try HealthUnit(parsing: symbol)
        units[symbol] = unit
        return unit
    }

    /// An ISO 8601 date-time with an offset.
    static func instant(_ text: String, field: String) throws -> Timestamp {
        guard let instant = ISO8601Text.timestamp(text.trimmingWhitespace) else {
            throw HealthError(
                .invalidSample,
                "\(field) \"\(text)\" is not an ISO 8601 date-time with an offset, e.g. 2024-03-10T08:00:00-05:00")
        }
        return instant
    }
}

/// UUIDs for rows that come without one, derived from their content, so that importing a file twice re-sends
/// the same UUIDs (HEALTHKIT.md §3: a re-sent UUID with the same content is a no-op for the server).
///
/// Two 64-bit FNV-1a hashes (different offset bases) of subject, type, start, end, the value in the type's
/// canonical unit rounded to 9 significant digits (``IdentityValue``), the source name and bundle identifier and the
/// metadata (keys sorted), with the RFC 9562 version 8
/// and variant bits set. Two rows identical in every field get one UUID, and so do rows that write one value in
/// two units (`1 km`, `1000 m`).
public enum StableUUID {
    /// The UUID of a sample with these fields.
    public static func derive(
        subject: String, type: QuantityType, start: Timestamp, end: Timestamp, canonicalValue: Double,
        source: SourceInfo, metadata: [String: MetadataValue] = [:]
    ) -> UUID {
        var first = FNV1a(basis: 0xcbf2_9ce4_8422_2325)
        var second = FNV1a(basis: 0x6c62_272e_07bb_0142)
        for part in [
            subject, type.identifier, String(start), String(end), String(canonicalValue.bitPattern), source.name,
            source.bundleIdentifier,
        ] + metadata.keys.sorted().map({ "\($0)=\(metadata[$0]!)" }) {
            first.add(part)
            second.add(part)
        }
        let high = first.state.bigEndian
        let low = second.state.bigEndian
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: high) { for i in 0..<8 { bytes[i] = $0[i] } }
        withUnsafeBytes(of: low) { for i in 0..<8 { bytes[8 + i] = $0[i] } }
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// 64-bit FNV-1a over strings, each followed by a zero byte so field boundaries count.
    struct FNV1a {
        var state: UInt64

        init(basis: UInt64) { state = basis }

        mutating func add(_ text: String) {
            for byte in text.utf8 { mix(byte) }
            mix(0)
        }

        mutating func mix(_ byte: UInt8) {
            state ^= UInt64(byte)
            state = state &* 0x0000_0100_0000_01B3
        }
    }
}
