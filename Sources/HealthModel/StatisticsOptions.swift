/// HealthKit's statistics options (HEALTHKIT.md §5).
public struct StatisticsOptions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The option bits, as the wire carries them.
    public let rawValue: UInt16
    /// Options from their bits (unknown bits are caught by ``validate(for:)``).
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Sum of cumulative samples.
    public static let cumulativeSum = StatisticsOptions(rawValue: 1 << 0)
    /// Average of discrete samples, by the type's style (§5).
    public static let discreteAverage = StatisticsOptions(rawValue: 1 << 1)
    /// Minimum of discrete samples.
    public static let discreteMin = StatisticsOptions(rawValue: 1 << 2)
    /// Maximum of discrete samples.
    public static let discreteMax = StatisticsOptions(rawValue: 1 << 3)
    /// The most recent sample's value and interval.
    public static let mostRecent = StatisticsOptions(rawValue: 1 << 4)
    /// Time covered by the contributing samples, overlaps counted once.
    public static let duration = StatisticsOptions(rawValue: 1 << 5)
    /// The same figures per source as well.
    public static let separateBySource = StatisticsOptions(rawValue: 1 << 6)
    /// Category types only **[ours]**: the time covered per value, merged across sources (HEALTHKIT.md §12).
    public static let separateByValue = StatisticsOptions(rawValue: 1 << 7)

    /// Every option with its HealthKit name, in bit order.
    public static let named: [(name: String, option: StatisticsOptions)] = [
        ("cumulativeSum", .cumulativeSum), ("discreteAverage", .discreteAverage), ("discreteMin", .discreteMin),
        ("discreteMax", .discreteMax), ("mostRecent", .mostRecent), ("duration", .duration),
        ("separateBySource", .separateBySource), ("separateByValue", .separateByValue),
    ]

    /// Bits no option uses.
    public static let unknownBits = UInt16.max & ~UInt16((1 << 8) - 1)

    /// The option names joined by commas, or `none`.
    public var description: String {
        let names = StatisticsOptions.named.filter { contains($0.option) }.map(\.name)
        return names.isEmpty ? "none" : names.joined(separator: ",")
    }

    /// Throws ``ErrorCode/invalidOptions`` when an option does not fit the type's aggregation style:
    /// cumulative types reject average, min and max; discrete types reject cumulativeSum; category types take only
    /// mostRecent, duration, separateBySource and separateByValue, which quantity types reject.
    public func validate(for type: QuantityType) throws {
        if rawValue & StatisticsOptions.unknownBits != 0 {
            throw HealthError(.invalidOptions, "unknown statistics option bits 0x\(String(rawValue, radix: 16))")
        }
        if isEmpty { throw HealthError(.invalidOptions, "no statistics option given for \(type)") }
        if type.isCategory {
            let valueOnly: StatisticsOptions = [.cumulativeSum, .discreteAverage, .discreteMin, .discreteMax]
            if let (name, _) = StatisticsOptions.named.first(where: {
                valueOnly.contains($0.option) && contains($0.option)
            }) {
                throw HealthError(.invalidOptions, "\(name) is not valid for category type \(type)")
            }
            return
        }
        if contains(.separateByValue) {
            throw HealthError(.invalidOptions, "separateByValue is valid only for category types, not \(type)")
        }
        if type.style == .cumulative {
            let discreteOnly: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax]
            if let (name, _) = StatisticsOptions.named.first(where: {
                discreteOnly.contains($0.option) && contains($0.option)
            }) {
                throw HealthError(.invalidOptions, "\(name) is not valid for cumulative type \(type)")
            }
        } else if contains(.cumulativeSum) {
            throw HealthError(.invalidOptions, "cumulativeSum is not valid for discrete type \(type)")
        }
    }
}

/// The sample that gave a "most recent" figure: its value and interval.
public struct MostRecent: Hashable, Sendable {
    /// The sample's value, in the query's unit.
    public var value: Double
    /// The sample's start.
    public var start: Timestamp
    /// The sample's end.
    public var end: Timestamp

    /// A most-recent figure.
    public init(value: Double, start: Timestamp, end: Timestamp) {
        self.value = value
        self.start = start
        self.end = end
    }
}

/// The figures a statistics query asked for; every value is in the unit the query asked for.
///
/// A figure that was not requested is `nil`. `duration` is in microseconds.
public struct StatisticsFigures: Hashable, Sendable {
    /// With `cumulativeSum`.
    public var sum: Double?
    /// With `discreteAverage`.
    public var average: Double?
    /// With `discreteMin`.
    public var minimum: Double?
    /// With `discreteMax`.
    public var maximum: Double?
    /// With `mostRecent`.
    public var mostRecent: MostRecent?
    /// With `duration`, in microseconds.
    public var duration: Int64?
    /// With `separateByValue` (category types): the time covered per value, in increasing raw value, only values
    /// that cover some time.
    public var durationByValue: [ValueDuration]?

    /// Figures; each defaults to not requested.
    public init(
        sum: Double? = nil, average: Double? = nil, minimum: Double? = nil, maximum: Double? = nil,
        mostRecent: MostRecent? = nil, duration: Int64? = nil, durationByValue: [ValueDuration]? = nil
    ) {
        self.sum = sum
        self.average = average
        self.minimum = minimum
        self.maximum = maximum
        self.mostRecent = mostRecent
        self.duration = duration
        self.durationByValue = durationByValue
    }

    /// The covered time of `rawValue` in ``durationByValue``, 0 when it has none.
    public func duration(ofValue rawValue: Int) -> Int64 {
        durationByValue?.first { $0.value == rawValue }?.duration ?? 0
    }
}

/// The time a category value covers (HEALTHKIT.md §12): a raw value of the type's enumeration and microseconds.
public struct ValueDuration: Hashable, Sendable {
    /// The raw value.
    public var value: Int
    /// Microseconds covered.
    public var duration: Int64

    /// A value's covered time.
    public init(value: Int, duration: Int64) {
        self.value = value
        self.duration = duration
    }
}

extension StatisticsFigures: CustomReflectable {
    /// The fields, leaving out ``durationByValue`` when unset, so printed wire messages (and the golden vectors
    /// in Protocol/vectors) stay as they were before category types existed.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [
            ("sum", sum as Any), ("average", average as Any), ("minimum", minimum as Any),
            ("maximum", maximum as Any), ("mostRecent", mostRecent as Any), ("duration", duration as Any),
        ]
        if let durationByValue { children.append(("durationByValue", durationByValue)) }
        return Mirror(self, children: children, displayStyle: .struct)
    }
}

/// The answer to a statistics query (HKStatistics), or one bucket of a collection.
public struct Statistics: Hashable, Sendable {
    /// Earliest start of the contributing samples (a bucket's start for a collection bucket).
    public var start: Timestamp
    /// Latest end of the contributing samples (a bucket's end for a collection bucket).
    public var end: Timestamp
    /// Merged across sources (HEALTHKIT.md §8).
    public var figures: StatisticsFigures
    /// With `separateBySource`: each source's own, un-merged figures.
    public var bySource: [SourceStatistics]

    /// A statistics answer.
    public init(start: Timestamp, end: Timestamp, figures: StatisticsFigures, bySource: [SourceStatistics] = []) {
        self.start = start
        self.end = end
        self.figures = figures
        self.bySource = bySource
    }
}

/// One source's figures in a `separateBySource` result.
public struct SourceStatistics: Hashable, Sendable {
    /// The source.
    public var source: SourceInfo
    /// Its figures alone.
    public var figures: StatisticsFigures

    /// One source's figures.
    public init(source: SourceInfo, figures: StatisticsFigures) {
        self.source = source
        self.figures = figures
    }
}
