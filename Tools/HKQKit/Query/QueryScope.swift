import Foundation
import HealthModel

/// The options `samples` and `stats` share (date range and its HealthKit options, sources, UUIDs, units, zone)
/// and what they resolve to: a ``SampleFilter``, the time zone, and how times print.
public struct QueryScope: Sendable {
    /// The option specs, in help order.
    public static let specs: [OptionSpec] =
        [
            .option(
                "from", value: "date", help: "Start bound: ISO 8601, a date, today, yesterday, now, now-7d, now-2h..."),
            .option("to", value: "date", help: "End bound (excluded), same forms as --from."),
        ] + predicateSpecs + [
            .option("unit", value: "unit", help: "Values in this unit (default: canonical); TYPE=UNIT for one type."),
            .option("tz", value: "zone", help: "IANA time zone for dates and output (default: the local zone)."),
        ]

    /// The predicate options besides the date bounds, which `collection` shares too (its `--from` and `--to`
    /// also choose the buckets listed): the strict date options, sources and UUIDs.
    public static let predicateSpecs: [OptionSpec] = [
        .flag("strict-start", help: "Only samples that start at or after --from (HealthKit strictStartDate)."),
        .flag("strict-end", help: "Only samples that end before --to (HealthKit strictEndDate)."),
        .option("source", value: "name", help: "Only samples from this source name or bundle id; repeatable."),
        .option("uuid", value: "uuid", help: "Only the sample with this UUID; repeatable."),
        .option("min", value: "value", help: "Only values at or above this, in --unit (or '100 count/min')."),
        .option("max", value: "value", help: "Only values at or below this, in --unit (or '180 count/min')."),
        .option(
            "where", value: "predicate",
            help: "A value comparison: 'value > 100 count/min' (>, >=, <, <=, ==); repeatable, all must hold."),
        .option(
            "value", value: "values",
            help: "Category types: only these values, comma-separated names or raw values (asleepCore,asleepDeep)."),
        .option(
            "metadata", value: "key[=value]",
            help: "Only samples with this metadata key (and value: a string, or a number); repeatable, all must hold."),
    ]

    /// The help paragraph explaining the date bounds.
    public static let discussion = """
        Without --strict-start a sample matches --from when it ends at or after it; without --strict-end it \
        matches --to when it starts before it (HealthKit's date predicate). Dates without an offset, and the \
        words today, yesterday and now, are read in --tz. --min and --max keep the values within them, both \
        included (HealthKit's quantity predicate), in the unit values print in unless they name one \
        (--min '100 count/min', --max 1.5km). --where states one comparison, strict ones too \
        (--where 'value > 100 count/min' --where 'value < 180'): HealthKit's predicateForQuantitySamples with \
        greaterThan, lessThan and equalTo; every --min, --max and --where must hold. --metadata HKTimeZone keeps \
        the samples that have the key, --metadata HKTimeZone=Europe/Berlin those whose value is that string (or \
        number). For category types (sleepAnalysis, appleStandHour, …) --value keeps \
        the samples with one of the values listed (HealthKit's category predicate), by name (inBed, asleepCore, \
        HKCategoryValueSleepAnalysisAsleepCore) or raw value; 'hkq types --format csv' lists every type's values.
        """

    /// The date, source and UUID predicate.
    public var filter: SampleFilter
    /// The zone dates were read in and times print in.
    public var timeZone: TimeZone
    /// How JSON and CSV write instants (`--time-format`).
    public var timeFormat: TimeFormat
    /// Prints times in ``timeZone``, JSON and CSV instants as ``timeFormat``.
    public var times: TimestampFormatter { TimestampFormatter(timeZone: timeZone, timeFormat: timeFormat) }
    /// The `--unit` values: one for every type (`nil` key) or per type identifier.
    var units: [String?: String]

    /// Resolves the options of `context`; an unknown zone, an unreadable date or `--to` before `--from` is a
    /// usage error.
    public init(_ context: CommandContext) throws {
        timeZone = try QueryScope.timeZone(context)
        timeFormat = context.globals.timeFormat
        let dates = DateArgumentParser(timeZone: timeZone, now: context.program.clock())
        func bound(_ name: String) throws -> Timestamp? {
            guard let text = context.arguments.value(name) else { return nil }
            guard let instant = dates.parse(text) else {
                throw context.usageError(
                    "invalid date '\(text)' for '--\(name)'; expected \(DateArgumentParser.expected)")
            }
            return instant
        }
        filter = try QueryScope.filter(context, from: try bound("from"), to: try bound("to"), timeZone: timeZone)
        units = [:]
        for value in context.arguments.values("unit") {
            if let equals = value.firstIndex(of: "=") {
                units[String(value[..<equals])] = String(value[value.index(after: equals)...])
            } else {
                units[nil] = value
            }
        }
    }

    /// The sample filter of ``predicateSpecs`` with the date bounds `from` and `to` (already read in
    /// `timeZone`, which messages print them in). `--to` before `--from` and a malformed `--uuid` are usage
    /// errors.
    static func filter(_ context: CommandContext, from: Timestamp?, to: Timestamp?, timeZone: TimeZone) throws
        -> SampleFilter
    {
        let date = DatePredicate(
            start: from, end: to, strictStartDate: context.arguments.flag("strict-start"),
            strictEndDate: context.arguments.flag("strict-end"))
        if let start = date.start, let end = date.end, end < start {
            let times = TimestampFormatter(timeZone: timeZone)
            throw context.usageError("--to (\(times.display(end))) is before --from (\(times.display(start)))")
        }
        let sources = context.arguments.values("source")
        let uuids = try context.arguments.values("uuid").map { text in
            guard let uuid = UUID(uuidString: text.trimmingWhitespace) else {
                throw context.usageError("invalid UUID '\(text)' for '--uuid'; expected 8-4-4-4-12 hex digits")
            }
            return uuid
        }
        return SampleFilter(
            date: date, sources: sources.isEmpty ? nil : Set(sources), uuids: uuids.isEmpty ? nil : Set(uuids),
            values: try valueBounds(context), metadata: try metadataPredicates(context))
    }

    /// `--metadata KEY` (the key is present) and `--metadata KEY=VALUE` (its value is the string VALUE, or the
    /// number it reads as): HealthKit's metadata predicates, all of which must hold. An empty key is a usage error.
    static func metadataPredicates(_ context: CommandContext) throws -> [MetadataPredicate]? {
        let texts = context.arguments.values("metadata")
        if texts.isEmpty { return nil }
        return try texts.map { text in
            let key = String(text.prefix { $0 != "=" })
            if key.trimmingWhitespace.isEmpty {
                throw context.usageError("invalid value '\(text)' for '--metadata'; expected KEY or KEY=VALUE")
            }
            guard key.count < text.count else { return MetadataPredicate(key: key) }
            let value = String(text.dropFirst(key.count + 1))
            var allowed: [MetadataValue] = [.string(value)]
            if let number = Double(value.trimmingWhitespace), number.isFinite { allowed.append(.number(number)) }
            return MetadataPredicate(key: key, allowedValues: allowed)
        }
    }

    /// `--min`, `--max` and `--where` as value bounds (HealthKit's quantity predicate): each a number, optionally
    /// followed by a unit (`100`, `100 count/min`, `1.5km`), all of which must hold; without a unit the unit is
    /// left empty and ``SampleFilter/inQueryUnit(_:)`` fills in the unit the values are asked in. All must name
    /// the same unit.
    static func valueBounds(_ context: CommandContext) throws -> ValueBounds? {
        var comparisons: [ValueComparison] = []
        for (name, relation) in [("min", ValueComparison.Relation.atLeast), ("max", .atMost)] {
            guard let text = context.arguments.value(name) else { continue }
            guard let quantity = ValueComparison.quantity(text) else {
                throw context.usageError(
                    "invalid value '\(text)' for '--\(name)'; expected a number, then optionally a unit")
            }
            comparisons.append(ValueComparison(relation: relation, value: quantity.value, unit: quantity.unit))
        }
        for text in context.arguments.values("where") {
            guard let comparison = ValueComparison(parsing: text) else {
                throw context.usageError(
                    "invalid predicate '\(text)' for '--where'; expected 'value OP NUMBER [UNIT]' with OP one of "
                        + "\(ValueComparison.operators.map(\.symbol).joined(separator: " ")), e.g. 'value > 100 count/min'"
                )
            }
            comparisons.append(comparison)
        }
        guard let first = comparisons.first else { return nil }
        if let other = comparisons.first(where: { $0.unit != first.unit }) {
            throw context.usageError(
                "--min, --max and --where name different units ('\(first.unit)', '\(other.unit)'); use one unit")
        }
        return comparisons.reduce(ValueBounds(unit: first.unit)) { $1.narrowing($0) }
    }

    /// `--tz`, else the process's zone; an unknown identifier is a usage error.
    static func timeZone(_ context: CommandContext) throws -> TimeZone {
        guard let identifier = context.arguments.value("tz") else { return LocalTimeZone.current }
        guard let zone = LocalTimeZone.named(identifier) else {
            throw context.usageError("unknown time zone '\(identifier)'; expected an IANA id such as America/New_York")
        }
        return zone
    }

    /// The unit values of `type` are asked in: its `TYPE=UNIT`, else the plain `--unit`, else canonical.
    ///
    /// Throws ``HealthError`` when the unit does not parse or does not fit the type.
    public func unit(for type: QuantityType) throws -> HealthUnit {
        // Most commands name no unit: the full identifier is then not built.
        let own = units.isEmpty ? nil : units[type.identifier] ?? units[type.fullIdentifier]
        // A plain --unit is for the quantity types queried; a category type has none.
        guard let text = own ?? (type.isCategory ? nil : units[nil]) else { return type.canonicalUnit }
        return try type.unit(parsing: text)
    }

    /// `TYPE=UNIT` keys that name no type in `types` (a typo the command should report).
    func unusedUnitKeys(_ types: [QuantityType]) -> [String] {
        units.keys.compactMap { $0 }.filter { key in
            !types.contains { $0.identifier == key || $0.fullIdentifier == key }
        }
        .sorted()
    }

    /// `between X and Y`, `since X`, `before Y` or `at any time`, for messages.
    public var rangeDescription: String {
        let times = self.times
        switch (filter.date.start, filter.date.end) {
        case (let start?, let end?): return "between \(times.display(start)) and \(times.display(end))"
        case (let start?, nil): return "since \(times.display(start))"
        case (nil, let end?): return "before \(times.display(end))"
        case (nil, nil): return "at any time"
        }
    }

    /// Looks up comma-separated type names (`stepCount,distanceWalkingRunning`); throws ``HealthError`` for an
    /// unknown one (with a suggestion) and a usage error for an empty list.
    static func types(_ text: String, context: CommandContext) throws -> [QuantityType] {
        let names = text.split(separator: ",").map { $0.trimmingWhitespace }.filter { !$0.isEmpty }
        if names.isEmpty { throw context.usageError("no type given") }
        var types: [QuantityType] = []
        for name in names {
            let type = try QuantityType.named(name)
            if !types.contains(type) { types.append(type) }
        }
        return types
    }
}

extension QueryScope {
    /// `filter` for a query of `type`: `--value` (category types) resolved to raw values of its enumeration. A
    /// `--value` on a quantity type, or a name the type's enumeration lacks, is a usage error.
    static func filter(_ filter: SampleFilter, values context: CommandContext, for type: QuantityType) throws
        -> SampleFilter
    {
        let names = context.arguments.values("value").flatMap { $0.split(separator: ",") }.map { $0.trimmingWhitespace }
            .filter { !$0.isEmpty }
        if names.isEmpty { return filter }
        guard let values = type.categoryValues else {
            throw context.usageError("--value is for category types; \(type) is a quantity type (use --min and --max)")
        }
        var raw = Set<Int>()
        for name in names {
            guard let value = values.rawValue(named: name) else {
                throw context.usageError(
                    "'\(name)' is not a value of \(type); expected one of \(values.values.map(\.name).joined(separator: ", "))"
                )
            }
            raw.insert(value)
        }
        var result = filter
        var bounds = result.values ?? ValueBounds()
        bounds.categoryValues = raw
        result.values = bounds
        return result
    }
}

extension SampleFilter {
    /// The filter with `unit` for value bounds given without one (`--min 100`: in the unit the values print in).
    func inQueryUnit(_ unit: HealthUnit) -> SampleFilter {
        var filter = self
        if filter.values?.unit.isEmpty == true { filter.values?.unit = unit.symbol }
        return filter
    }
}
