import Foundation
import HealthCodec
import HealthModel

/// A source met in the export, interned: records point at it instead of carrying four strings each.
final class SourceEntry {
    /// Increasing, never reused (also after the cache starts over), so batches can key their dictionaries by it.
    let id: Int
    /// The source as batches carry it.
    let info: SourceInfo
    /// The decoded name, fed to the sample identity.
    let nameBytes: [UInt8]

    init(id: Int, info: SourceInfo) {
        self.id = id
        self.info = info
        nameBytes = Array(info.name.utf8)
    }
}

/// A unit met in the export, interned.
struct UnitEntry {
    /// The unit as written.
    let unit: HealthUnit
}

/// A record accepted from its start tag, waiting for its `<MetadataEntry>` children and its end.
struct PendingSample {
    var line: Int
    /// The type's place in ``QuantityType/all`` (a record is copied a few times on its way to its batch, and the
    /// type itself holds strings and tables to retain at each copy).
    var typeIndex: Int
    var start: Timestamp
    var end: Timestamp
    /// In the type's canonical unit, rounded as its identity is (``IdentityValue``).
    var value: Double
    var source: SourceEntry
    /// The record's content identity (source, type, interval, identity value), which ``identity`` continues.
    var base: ContentHash128
    /// The rest of the element: its other attributes and its children, fed as they arrive.
    var identity = ElementIdentity()
    var metadata: [String: MetadataValue] = [:]

    init(
        line: Int, type: QuantityType, start: Timestamp, end: Timestamp, value: Double, source: SourceEntry,
        base: ContentHash128
    ) {
        (self.line, typeIndex, self.start, self.end) = (line, type.index, start, end)
        (self.value, self.source, self.base) = (value, source, base)
    }

    /// The sample's UUID: the identity of the whole element (``ElementIdentity``), set by ``seal()`` once its end
    /// is read.
    private(set) var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Sets ``uuid`` from the element's identity, read whole: call it at the element's end.
    mutating func seal() { uuid = identity.uuid(base: base) }

    /// The sample's type.
    var type: QuantityType { QuantityType.all[typeIndex] }
}

/// What adding a `<MetadataEntry>` to a record, workout or correlation came to.
enum MetadataEntryOutcome {
    case kept
    /// A new key past ``RecordMapper/maxMetadataEntries``: the element is rejected whole.
    case pastCap
    /// No key or no value: nothing to keep, counted as skipped.
    case incomplete

    /// Adds the entry `key`, `value` to `metadata`, unless one is missing or the key is new past
    /// ``RecordMapper/maxMetadataEntries``; says which.
    static func add(_ key: String?, _ value: MetadataValue?, to metadata: inout [String: MetadataValue]) -> Self {
        guard let key, let value else { return .incomplete }
        guard metadata[key] != nil || metadata.count < RecordMapper.maxMetadataEntries else { return .pastCap }
        metadata[key] = value
        return .kept
    }
}

/// What a top-level `<Record>` start tag turned into.
enum RecordOutcome {
    case sample(PendingSample)
    case skipped(kind: String)
    case rejected(Rejection)
}

/// Maps `<Record>` attributes to samples: type and unit lookup, value and dates, source interning, identity.
///
/// Percent types (canonical unit `%`, e.g. oxygenSaturation): exports write the fraction (0.97) with unit `%`,
/// which is what HealthKit's percent unit means. The importer keeps that number and sends it with unit `%`, so
/// the engine stores the fraction unchanged (HEALTHKIT.md §2, §11); a dimensionless unit such as `count` on a
/// percent type is sent as `%` too, its number being the fraction already. Not thread-safe.
struct RecordMapper {
    /// Most metadata entries of a record, a workout or a correlation: what the wire carries in one row
    /// (``BatchLimits/maxMetadataEntriesPerRow``). An element with more is rejected whole.
    static let maxMetadataEntries = BatchLimits.default.maxMetadataEntriesPerRow

    private var types = ByteKeyedCache<TypeResolution>(limit: 1024)
    private var units = ByteKeyedCache<UnitResolution>(limit: 1024)
    private var sources = ByteKeyedCache<SourceEntry>(limit: 4096)
    private var nextSourceID = 0
    private var lastSource = LastSource()
    /// Attributes of the last record mapped that the importer does not read (``takeUnreadAttributes()``).
    private var unread: [String] = []
    /// Reused buffers: decoded attribute values and the source key.
    private var decoded: [UInt8] = []
    private var sourceKey: [UInt8] = []

    private enum TypeResolution {
        /// A catalog type (quantity or category), with its short identifier's bytes for the sample identity.
        case stored(QuantityType, identifier: [UInt8])
        case other(kind: String)
        case unknown(Rejection)
    }

    private enum UnitResolution {
        case unit(UnitEntry)
        case invalid(Rejection)
    }

    /// Maps the attributes of a `<Record>` starting on `line`.
    mutating func map(_ attributes: [XMLAttribute], line: Int) -> RecordOutcome {
        if !unread.isEmpty { unread.removeAll() }
        var fields = RecordFields()
        for attribute in attributes { fields.take(attribute) }
        guard let typeAttribute = fields.type else { return .rejected(Rejection("missing attribute \"type\"")) }
        let type: QuantityType
        let identifier: [UInt8]
        switch resolveType(typeAttribute) {
        case .stored(let stored, let bytes): (type, identifier) = (stored, bytes)
        case .other(let kind): return .skipped(kind: kind)
        case .unknown(let rejection): return .rejected(rejection)
        }
        do {
            var sample = try sample(type: type, identifier: identifier, fields: fields, line: line)
            // The base covers type, unit (the identity value is canonical), value, source name, start and end;
            // the rest of the element feeds its identity.
            if let version = fields.sourceVersion {
                sample.identity.add(version, at: Self.places.sourceVersion, scratch: &decoded)
            }
            if let device = fields.device { sample.identity.add(device, at: Self.places.device, scratch: &decoded) }
            if let created = fields.creationDate {
                sample.identity.add(created, at: Self.places.creationDate, scratch: &decoded)
            }
            for attribute in fields.others {
                let place = ElementIdentity.place(
                    depth: 0, element: ByteSpan(literal: "Record"), attribute: attribute.name, scratch: &decoded)
                sample.identity.add(attribute, at: place, scratch: &decoded)
                unread.append(attribute.name.string)
            }
            return .sample(sample)
        } catch let rejection as Rejection {
            return .rejected(rejection)
        } catch {
            return .rejected(Rejection("\(error)"))
        }
    }

    /// The names of the attributes of the last record mapped as a sample that are not read
    /// (``ExportVocabulary/record``), to be counted as skipped; empty for every record Apple writes today.
    mutating func takeUnreadAttributes() -> [String] {
        guard !unread.isEmpty else { return [] }
        defer { unread.removeAll() }
        return unread
    }

    /// Adds a `<MetadataEntry key value>` to `sample`: numbers that parse fully become ``MetadataValue/number``,
    /// everything else (`HKTimeZone` included) stays a string. An entry past ``maxMetadataEntries`` (the caller
    /// rejects the record) or without its key or value (the caller counts it as skipped) is not kept; the entry is
    /// part of the record's identity either way.
    @discardableResult
    mutating func addMetadata(_ attributes: [XMLAttribute], to sample: inout PendingSample) -> MetadataEntryOutcome {
        sample.identity.add(element: Self.metadataEntryName, depth: 1, attributes, scratch: &decoded)
        var key: String?
        var value: MetadataValue?
        for attribute in attributes {
            if attribute.name.equals("key") {
                key = string(attribute)
            } else if attribute.name.equals("value") {
                value = withDecoded(attribute) { bytes in
                    if let number = DecimalParser.parse(bytes), number.isFinite { return .number(number) }
                    return .string(bytes.string)
                }
            }
        }
        return .add(key, value, to: &sample.metadata)
    }

    /// Adds a child element other than `<MetadataEntry>` (`<HeartRateVariabilityMetadataList>` and its
    /// `<InstantaneousBeatsPerMinute>`s) at `depth` below the record to its identity; its content is not stored.
    mutating func addChild(_ name: ByteSpan, depth: Int, _ attributes: [XMLAttribute], to sample: inout PendingSample) {
        sample.identity.add(element: name, depth: depth, attributes, scratch: &decoded)
    }

    private static var metadataEntryName: ByteSpan { ByteSpan(literal: "MetadataEntry") }

    /// The place in a record's identity of each attribute beyond its base that the importer reads
    /// (``ExportVocabulary/record``), worked out once.
    private static let places: (sourceVersion: UInt64, device: UInt64, creationDate: UInt64) = {
        var scratch: [UInt8] = []
        func place(_ name: StaticString) -> UInt64 {
            ElementIdentity.place(
                depth: 0, element: ByteSpan(literal: "Record"), attribute: ByteSpan(literal: name), scratch: &scratch)
        }
        return (place("sourceVersion"), place("device"), place("creationDate"))
    }()

    // MARK: - Samples

    private mutating func sample(
        type: QuantityType, identifier: [UInt8], fields: RecordFields, line: Int
    ) throws -> PendingSample {
        if let values = type.categoryValues {
            return try categorySample(type: type, values: values, identifier: identifier, fields: fields, line: line)
        }
        let unitEntry: UnitEntry
        switch resolveUnit(try require(fields.unit, "unit")) {
        case .unit(let entry): unitEntry = entry
        case .invalid(let rejection): throw rejection
        }
        guard unitEntry.unit.isCompatible(with: type.canonicalUnit) else {
            throw Rejection(
                "unit \"\(unitEntry.unit.symbol)\" is not compatible with \(type) (\(type.canonicalUnit.symbol))")
        }
        let valueAttribute = try require(fields.value, "value")
        guard let value = withDecoded(valueAttribute, DecimalParser.parse), value.isFinite else {
            throw Rejection("value is not a number", "value \"\(string(valueAttribute))\" is not a number")
        }
        let (start, end) = try interval(fields)
        if type.style == .cumulative, value < 0 {
            throw Rejection(
                "negative value for a cumulative type", "\(type) is cumulative and cannot take the value \(value)")
        }
        guard let canonical = IdentityValue.canonical(value, unit: unitEntry.unit, type: type) else {
            throw Rejection(
                "value out of range", "\(value) \(unitEntry.unit.symbol) is out of range for \(type)")
        }
        let source = try resolveSource(fields)

        // The identity names the content, not its spelling: the canonical value rounded to 9 digits
        // (IdentityValue), so a re-export in other display units (mi for km, kJ for kcal) names the same samples.
        // The sample is sent with that value in the canonical unit, so both exports store the same bits.
        let base = SampleContentIdentity.hash(
            sourceName: source.nameBytes, typeIdentifier: identifier, start: start, end: end, canonicalValue: canonical)

        return PendingSample(
            line: line, type: type, start: start, end: end, value: canonical, source: source, base: base)
    }

    /// A category record (HEALTHKIT.md §12): no unit, the value an enumeration name such as
    /// `HKCategoryValueSleepAnalysisAsleepCore` (older exports' names included), stored as its raw value; a record
    /// of a not-applicable type without a value takes `notApplicable` (``CategoryValueSet/valueWhenAbsent``). Its
    /// identity is built as a quantity record's, from the raw value.
    private mutating func categorySample(
        type: QuantityType, values: CategoryValueSet, identifier: [UInt8], fields: RecordFields, line: Int
    ) throws -> PendingSample {
        let raw: Int
        if let valueAttribute = fields.value {
            let name = string(valueAttribute)
            guard let named = values.rawValue(named: name) else {
                throw Rejection(
                    "unknown \(type) value",
                    "\"\(name)\" is not a value of \(type) (\(values.enumeration): \(values.listing))")
            }
            raw = named
        } else if let implied = values.valueWhenAbsent {
            raw = implied
        } else {
            throw Rejection(
                "missing \(type) value",
                "missing attribute \"value\": \(type) takes one of \(values.enumeration): \(values.listing)")
        }
        let (start, end) = try interval(fields)
        let source = try resolveSource(fields)
        let value = Double(raw)
        let base = SampleContentIdentity.hash(
            sourceName: source.nameBytes, typeIdentifier: identifier, start: start, end: end, canonicalValue: value)
        return PendingSample(line: line, type: type, start: start, end: end, value: value, source: source, base: base)
    }

    /// The record's start and end dates; a record that ends before it starts is rejected.
    private mutating func interval(_ fields: RecordFields) throws -> (Timestamp, Timestamp) {
        let start = try date(try require(fields.startDate, "startDate"), "startDate")
        let end = try date(try require(fields.endDate, "endDate"), "endDate")
        if start > end {
            throw Rejection(
                "ends before it starts",
                "ends before it starts: \(string(fields.startDate!)) to \(string(fields.endDate!))")
        }
        return (start, end)
    }

    private func require(_ attribute: XMLAttribute?, _ name: String) throws -> XMLAttribute {
        guard let attribute else { throw Rejection("missing attribute \"\(name)\"") }
        return attribute
    }

    private mutating func date(_ attribute: XMLAttribute, _ name: String) throws -> Timestamp {
        guard let instant = withDecoded(attribute, ExportDateParser.parse) else {
            throw Rejection("\(name) is not a date", "\(name) \"\(string(attribute))\" is not a date")
        }
        return instant
    }

    // MARK: - Interning

    private mutating func resolveType(_ attribute: XMLAttribute) -> TypeResolution {
        if let known = types.value(for: attribute.value) { return known }
        let name = string(attribute)
        let resolution: TypeResolution
        if name.hasPrefix("HKQuantityTypeIdentifier") || name.hasPrefix("HKCategoryTypeIdentifier") {
            do {
                let type = try QuantityType.named(name)
                resolution = .stored(type, identifier: Array(type.identifier.utf8))
            } catch {
                let kind = name.hasPrefix("HKCategoryTypeIdentifier") ? "category" : "quantity"
                resolution = .unknown(Rejection("unknown \(kind) type \"\(name)\"", "\(error)"))
            }
        } else {
            resolution = .other(kind: name)
        }
        types.insert(resolution, for: attribute.value)
        return resolution
    }

    private mutating func resolveUnit(_ attribute: XMLAttribute) -> UnitResolution {
        if let known = units.value(for: attribute.value) { return known }
        let symbol = string(attribute)
        let resolution: UnitResolution
        do {
            let unit = try HealthUnit(parsing: symbol)
            resolution = .unit(UnitEntry(unit: unit))
        } catch {
            resolution = .invalid(Rejection("unknown unit \"\(symbol)\"", "\(error)"))
        }
        units.insert(resolution, for: attribute.value)
        return resolution
    }

    /// The source of a record, interned by its raw name, version and the stable part of its device.
    private mutating func resolveSource(_ fields: RecordFields) throws -> SourceEntry {
        let nameAttribute = try require(fields.sourceName, "sourceName")
        // Records come in runs of one source: the same raw attributes as the record before name its source.
        if let entry = lastSource.entry(nameAttribute, fields.sourceVersion, fields.device) { return entry }
        let entry = try internSource(fields, name: nameAttribute)
        lastSource.remember(nameAttribute, fields.sourceVersion, fields.device, entry)
        return entry
    }

    /// The raw source attributes of the last record and the source they name (buffers reused from record to
    /// record, so a run of alternating sources allocates nothing).
    private struct LastSource {
        /// Name, version and device, each with a presence byte in front.
        private var raw: [[UInt8]] = [[], [], []]
        private var named: SourceEntry?

        /// The source of the last record when these attributes are its, byte for byte. (Compared one by one, not
        /// through an array of the three: that array would be allocated for every record.)
        func entry(_ name: XMLAttribute, _ version: XMLAttribute?, _ device: XMLAttribute?) -> SourceEntry? {
            guard let named, Self.same(raw[0], name), Self.same(raw[1], version), Self.same(raw[2], device) else {
                return nil
            }
            return named
        }

        /// Whether `stored` (a presence byte, then the bytes) holds `attribute`'s value, or its absence.
        @inline(__always)
        private static func same(_ stored: [UInt8], _ attribute: XMLAttribute?) -> Bool {
            guard let attribute else { return stored.first == 0 }
            let value = attribute.value
            guard stored.count == value.count + 1, stored.first == 1 else { return false }
            return value.isEmpty
                || stored.withUnsafeBufferPointer { memcmp($0.baseAddress! + 1, value.baseAddress!, value.count) == 0 }
        }

        mutating func remember(
            _ name: XMLAttribute, _ version: XMLAttribute?, _ device: XMLAttribute?, _ entry: SourceEntry
        ) {
            Self.store(name, in: &raw[0])
            Self.store(version, in: &raw[1])
            Self.store(device, in: &raw[2])
            named = entry
        }

        /// Replaces `stored` with `attribute`'s presence byte and value, in its own buffer.
        private static func store(_ attribute: XMLAttribute?, in stored: inout [UInt8]) {
            stored.removeAll(keepingCapacity: true)
            stored.append(attribute == nil ? 0 : 1)
            if let attribute { stored.append(contentsOf: attribute.value) }
        }
    }

    /// The source of a record looked up, or made, by its key.
    private mutating func internSource(_ fields: RecordFields, name nameAttribute: XMLAttribute) throws -> SourceEntry {
        sourceKey.removeAll(keepingCapacity: true)
        sourceKey.append(contentsOf: nameAttribute.value)
        sourceKey.append(0)
        if let version = fields.sourceVersion { sourceKey.append(contentsOf: version.value) }
        sourceKey.append(0)
        if let device = fields.device {
            sourceKey.append(contentsOf: DeviceDescription.stablePart(ofRaw: device.value))
        }
        let known = sourceKey.withUnsafeBufferPointer { sources.value(for: $0) }
        if let known { return known }
        let info = SourceInfo(
            name: string(nameAttribute), version: fields.sourceVersion.map { string($0) } ?? "",
            device: fields.device.map { withDecoded($0) { DeviceDescription.shortForm($0).string } } ?? "")
        let entry = SourceEntry(id: nextSourceID, info: info)
        nextSourceID += 1
        sourceKey.withUnsafeBufferPointer { sources.insert(entry, for: $0) }
        return entry
    }

    // MARK: - Decoding

    /// Calls `body` with the value of `attribute`, its references decoded.
    private mutating func withDecoded<R>(_ attribute: XMLAttribute, _ body: (ByteSpan) -> R) -> R {
        guard attribute.hasReferences else { return body(attribute.value) }
        decoded.removeAll(keepingCapacity: true)
        // The tokenizer checked every reference, so decoding cannot fail here.
        _ = XMLReferences.decode(attribute.value, into: &decoded)
        return decoded.withUnsafeBufferPointer(body)
    }

    /// The value of `attribute` as a String, references decoded.
    private mutating func string(_ attribute: XMLAttribute) -> String {
        withDecoded(attribute) { $0.string }
    }
}

/// The attributes of a `<Record>` the mapper reads, picked out in one pass by comparing names as bytes.
private struct RecordFields {
    var type: XMLAttribute?
    var unit: XMLAttribute?
    var value: XMLAttribute?
    var sourceName: XMLAttribute?
    var sourceVersion: XMLAttribute?
    var device: XMLAttribute?
    var startDate: XMLAttribute?
    var endDate: XMLAttribute?
    var creationDate: XMLAttribute?
    /// Attributes none of the above names (none in the exports Apple writes): part of the record's identity,
    /// counted as not read.
    var others: [XMLAttribute] = []

    @inline(__always)
    mutating func take(_ attribute: XMLAttribute) {
        let name = attribute.name
        switch name.count {
        case 4 where name.equals("type"): type = attribute
        case 4 where name.equals("unit"): unit = attribute
        case 5 where name.equals("value"): value = attribute
        case 6 where name.equals("device"): device = attribute
        case 7 where name.equals("endDate"): endDate = attribute
        case 9 where name.equals("startDate"): startDate = attribute
        case 10 where name.equals("sourceName"): sourceName = attribute
        case 12 where name.equals("creationDate"): creationDate = attribute
        case 13 where name.equals("sourceVersion"): sourceVersion = attribute
        default: others.append(attribute)
        }
    }
}
