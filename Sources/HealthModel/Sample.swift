import Foundation

/// The app or device that wrote samples: HealthKit's `HKSource` plus the device and version it ran.
public struct SourceInfo: Hashable, Sendable, CustomStringConvertible {
    /// Display name, e.g. "Anna's Apple Watch" (may hold a no-break space).
    public var name: String
    /// Bundle identifier, e.g. `com.apple.health.8E2F…`; empty when unknown.
    public var bundleIdentifier: String
    /// Source version (app version or OS version); empty when unknown.
    public var version: String
    /// Device description, e.g. `Watch6,2`; empty when unknown.
    public var device: String

    /// A source; only the name is required.
    public init(name: String, bundleIdentifier: String = "", version: String = "", device: String = "") {
        self.name = name
        self.bundleIdentifier = bundleIdentifier
        self.version = version
        self.device = device
    }

    /// The display name.
    public var description: String { name }
}

/// A metadata value attached to a sample (HealthKit allows strings, numbers, dates and quantities).
public enum MetadataValue: Hashable, Sendable {
    case string(String)
    case number(Double)
    case date(Timestamp)
    case quantity(Double, unit: String)
}

/// Well-known metadata keys (HEALTHKIT.md §3).
public enum MetadataKey {
    /// Identifies a sample across saves by its source; with ``syncVersion`` a newer save replaces it.
    public static let syncIdentifier = "HKMetadataKeySyncIdentifier"
    /// Version of a synced sample; a higher one replaces the stored sample, an equal or lower one is ignored.
    public static let syncVersion = "HKMetadataKeySyncVersion"
    /// Marks a manual entry: HealthKit's `HKMetadataKeyWasUserEntered`, whose value (what apps store and exports
    /// write, `<MetadataEntry key="HKWasUserEntered" value="1"/>`) is this short key.
    public static let wasUserEntered = "HKWasUserEntered"
    /// The constant's name spelled as a key: what ``wasUserEntered`` held in earlier versions, so clients may have
    /// stored it; hkd reads it as ``wasUserEntered`` (HEALTHKIT.md §8).
    public static let wasUserEnteredLongForm = "HKMetadataKeyWasUserEntered"
    /// The IANA time zone the sample was recorded in.
    public static let timeZone = "HKTimeZone"
}

/// One quantity sample: what HealthKit calls an `HKQuantitySample`, for one subject.
public struct Sample: Hashable, Sendable {
    /// Unique per subject; re-sending the same UUID with the same content is a no-op.
    public var uuid: UUID
    /// The person the sample is about.
    public var subject: String
    /// The quantity type.
    public var type: QuantityType
    /// Start of the interval measured.
    public var start: Timestamp
    /// End of the interval; equal to ``start`` for a point measurement.
    public var end: Timestamp
    /// The value in ``unit``.
    public var value: Double
    /// The unit of ``value``; must be compatible with the type.
    public var unit: HealthUnit
    /// The app or device that wrote the sample.
    public var source: SourceInfo
    /// Free-form metadata (see ``MetadataKey``).
    public var metadata: [String: MetadataValue]

    /// A sample; the UUID defaults to a random one.
    public init(
        uuid: UUID = UUID(), subject: String, type: QuantityType, start: Timestamp, end: Timestamp, value: Double,
        unit: HealthUnit, source: SourceInfo, metadata: [String: MetadataValue] = [:]
    ) {
        self.uuid = uuid
        self.subject = subject
        self.type = type
        self.start = start
        self.end = end
        self.value = value
        self.unit = unit
        self.source = source
        self.metadata = metadata
    }

    /// A category sample (HEALTHKIT.md §12): `value` names one of the type's enumeration values, by name
    /// (`asleepCore`), export name (`HKCategoryValueSleepAnalysisAsleepCore`) or raw value (`"3"`); no unit.
    ///
    /// Throws ``ErrorCode/invalidArgument`` for a quantity type and ``ErrorCode/invalidSample`` for a value the
    /// enumeration lacks, naming the value and the type.
    public init(
        uuid: UUID = UUID(), subject: String, category type: QuantityType, start: Timestamp, end: Timestamp,
        value: String, source: SourceInfo, metadata: [String: MetadataValue] = [:]
    ) throws {
        guard let values = type.categoryValues else {
            throw HealthError(.invalidArgument, "\(type) is a quantity type; give it a value and a unit")
        }
        guard let raw = values.rawValue(named: value) else {
            throw HealthError(
                .invalidSample,
                "\"\(value)\" is not a value of category type \(type) (\(values.enumeration): \(values.listing))")
        }
        self.init(
            uuid: uuid, subject: subject, type: type, start: start, end: end, value: Double(raw),
            unit: type.canonicalUnit, source: source, metadata: metadata)
    }

    /// A category sample's value in its type's enumeration (`nil` for a quantity sample, or a raw value the
    /// enumeration lacks).
    public var categoryValue: CategoryValue? {
        guard let values = type.categoryValues, let raw = Int(exactly: value) else { return nil }
        return values.value(raw: raw)
    }

    /// The value converted to the type's canonical unit.
    public func canonicalValue() throws -> Double { try unit.convert(value, to: type.canonicalUnit) }

    /// Checks the sample's invariants and throws a ``HealthError`` naming the first one broken.
    public func validate() throws {
        try SampleRules.validate(
            type: type, unit: unit, start: start, end: end, value: value, subject: subject)
    }
}

/// The rules every sample obeys, shared by ``Sample`` and columnar ``SampleBatch`` validation.
public enum SampleRules {
    /// Longest subject identifier, in UTF-8 bytes.
    public static let maxSubjectLength = 256

    /// Throws ``ErrorCode/invalidSample`` or ``ErrorCode/incompatibleUnit`` for a sample that breaks a rule.
    public static func validate(
        type: QuantityType, unit: HealthUnit, start: Timestamp, end: Timestamp, value: Double, subject: String
    ) throws {
        try validate(subject: subject)
        try validate(unit: unit, for: type)
        try validate(start: start, end: end, value: value, type: type)
        try validate(value: value, unit: unit, type: type)
    }

    /// Throws unless the subject is non-empty and at most ``maxSubjectLength`` bytes.
    public static func validate(subject: String) throws {
        if subject.isEmpty { throw HealthError(.invalidArgument, "the subject is empty") }
        if subject.utf8.count > maxSubjectLength {
            throw HealthError(.invalidArgument, "the subject is longer than \(maxSubjectLength) bytes")
        }
    }

    /// Throws ``ErrorCode/incompatibleUnit`` unless `unit` measures the same dimension as the type.
    public static func validate(unit: HealthUnit, for type: QuantityType) throws {
        if type.isCategory, unit.symbol != type.canonicalUnit.symbol {
            throw HealthError(
                .incompatibleUnit, "category type \(type) has no unit, but \"\(unit.symbol)\" was given")
        }
        guard unit.isCompatible(with: type.canonicalUnit) else {
            throw HealthError(
                .incompatibleUnit, "unit \"\(unit.symbol)\" is not compatible with \(type) (\(type.canonicalUnit))")
        }
    }

    /// Throws ``ErrorCode/invalidSample`` for an instant outside ``SupportedInstants``, an inverted interval, a
    /// non-finite value, a negative cumulative one, or a category value its type's enumeration does not list.
    public static func validate(start: Timestamp, end: Timestamp, value: Double, type: QuantityType) throws {
        if !SupportedInstants.contains(start) {
            throw HealthError(
                .invalidSample, "\(type) sample starts at \(start), outside \(SupportedInstants.description)")
        }
        if !SupportedInstants.contains(end) {
            throw HealthError(.invalidSample, "\(type) sample ends at \(end), outside \(SupportedInstants.description)")
        }
        if start > end {
            throw HealthError(.invalidSample, "\(type) sample ends (\(end)) before it starts (\(start))")
        }
        if !value.isFinite {
            throw HealthError(.invalidSample, "\(type) sample value \(value) is not a finite number")
        }
        if type.style == .cumulative, value < 0 {
            throw HealthError(.invalidSample, "\(type) is cumulative and cannot take the negative value \(value)")
        }
        try validate(categoryValue: value, type: type)
    }

    /// Whether a sample keeps every rule ``validate(start:end:value:type:)`` checks, without building an error:
    /// for a pass over a batch's columns before looking for the row that breaks a rule. `cumulative` and
    /// `categoryValues` are the type's (``QuantityType/style``, ``QuantityType/categoryValues``), read once per
    /// batch. Must accept exactly what `validate` accepts.
    @inline(__always)
    public static func accepts(
        start: Timestamp, end: Timestamp, value: Double, cumulative: Bool, categoryValues: CategoryValueSet?
    ) -> Bool {
        SupportedInstants.contains(start) && SupportedInstants.contains(end) && start <= end && value.isFinite
            && !(cumulative && value < 0) && (categoryValues?.contains(value) ?? true)
    }

    /// Throws ``ErrorCode/invalidSample`` naming the value and the type when `type` is a category type and
    /// `value` is not one of its enumeration's raw values; nothing for a quantity type.
    public static func validate(categoryValue value: Double, type: QuantityType) throws {
        if let values = type.categoryValues, !values.contains(value) {
            throw HealthError(
                .invalidSample,
                "\(value.formatted) is not a value of category type \(type) (\(values.enumeration): \(values.listing))")
        }
    }

    /// Throws ``ErrorCode/invalidSample`` when `value` in `unit` overflows once converted to the canonical unit
    /// (e.g. 1e308 kcal); the unit must already be compatible with the type.
    public static func validate(value: Double, unit: HealthUnit, type: QuantityType) throws {
        let canonical = try unit.convert(value, to: type.canonicalUnit)
        if !canonical.isFinite {
            throw HealthError(
                .invalidSample,
                "\(type) sample value \(value) \(unit) is out of range in \(type.canonicalUnit) (\(canonical))")
        }
    }
}

extension Double {
    /// The value as an integer when it is one (`3`), else as Swift prints it (`2.5`).
    fileprivate var formatted: String {
        if let integer = Int(exactly: self) { return String(integer) }
        return String(self)
    }
}
