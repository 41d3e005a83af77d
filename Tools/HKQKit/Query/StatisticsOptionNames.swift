import HealthModel

/// The names `stats --options` accepts: short ones (`sum`, `avg`, `min`, `max`, `recent`, `duration`,
/// `by-source`, `by-value`) and HealthKit's (`cumulativeSum`, `discreteAverage`, `discreteMin`, `discreteMax`,
/// `mostRecent`, `separateBySource`, and ours, `separateByValue`), in any case, with or without dashes and
/// underscores.
public enum StatisticsOptionNames {
    /// Every accepted name, folded (lower case, no `-` or `_`), with its option.
    static let folded: [String: StatisticsOptions] = {
        var names: [String: StatisticsOptions] = [
            "sum": .cumulativeSum, "avg": .discreteAverage, "average": .discreteAverage, "mean": .discreteAverage,
            "min": .discreteMin, "minimum": .discreteMin, "max": .discreteMax, "maximum": .discreteMax,
            "recent": .mostRecent, "latest": .mostRecent, "bysource": .separateBySource,
            "sources": .separateBySource, "byvalue": .separateByValue, "values": .separateByValue,
        ]
        for (name, option) in StatisticsOptions.named { names[fold(name)] = option }
        return names
    }()

    /// The short names, for help and errors.
    public static let shortNames = "sum, avg, min, max, recent, duration, by-source, by-value"

    /// `name` lower-cased without dashes and underscores.
    static func fold(_ name: String) -> String { name.lowercased().filter { $0 != "-" && $0 != "_" } }

    /// The options named in `lists` (each comma-separated); throws the unknown name as the error's payload.
    public static func parse(_ lists: [String]) throws(UnknownName) -> StatisticsOptions {
        var options: StatisticsOptions = []
        for list in lists {
            for name in list.split(separator: ",").map({ $0.trimmingWhitespace }) where !name.isEmpty {
                guard let option = folded[fold(name)] else { throw UnknownName(name: name) }
                options.insert(option)
            }
        }
        return options
    }

    /// What `stats` asks for when `--options` is absent: the sum of a cumulative type, the covered time in all
    /// and per value of a category type, else average, min and max.
    public static func defaults(for type: QuantityType) -> StatisticsOptions {
        if type.isCategory { return [.duration, .separateByValue] }
        return type.style == .cumulative ? .cumulativeSum : [.discreteAverage, .discreteMin, .discreteMax]
    }

    /// An option name that is not known.
    public struct UnknownName: Error, Equatable {
        /// The name as given.
        public var name: String
    }
}
