import HealthModel

// The characteristics and activity summaries of each subject (HEALTHKIT.md §13): small tables apart from the
// quantity shards, checked here before anything is logged or applied.

extension HealthStore {
    /// Sets or clears (`nil` or empty) characteristics of `subject`; values in short or export form, normalized
    /// (``Characteristics/normalized(_:_:)``, the form only: log replay comes here; a request's values are checked
    /// against HealthKit's before, by ``CharacteristicEntry/validated()``). Returns the characteristics afterwards.
    /// Throws ``ErrorCode/invalidArgument`` naming the key and value for an invalid one, before anything changes.
    @discardableResult
    public func setCharacteristics(
        subject: String, _ changes: [(key: CharacteristicKey, value: String?)], beforeApplying: () throws -> Void = {}
    ) throws -> Characteristics {
        try SampleRules.validate(subject: subject)
        let normalized = try changes.map { key, value in
            (key: key, value: try value.flatMap { try Characteristics.normalized(key, $0) })
        }
        try characteristicTable.apply(subject: subject, normalized, beforeApplying: beforeApplying)
        return characteristics(subject: subject)
    }

    /// The characteristics of `subject` (empty when none is set).
    public func characteristics(subject: String) -> Characteristics {
        var result = Characteristics()
        for (key, value) in characteristicTable.entries(subject: subject) { result.set(key, stored: value) }
        return result
    }

    /// Stores `summaries` for `subject`, each replacing the one of its day; all or none. Returns how many days
    /// changed (new or with other values); a summary equal to the stored one changes nothing. Throws
    /// ``ErrorCode/invalidSample`` for an invalid summary (``ActivitySummary/validate()``) and
    /// ``ErrorCode/invalidArgument`` for a day given twice.
    @discardableResult
    public func insertActivitySummaries(
        subject: String, _ summaries: [ActivitySummary], beforeApplying: () throws -> Void = {}
    ) throws -> Int {
        try SampleRules.validate(subject: subject)
        var days: Set<Int> = []
        for summary in summaries {
            try summary.validate()
            guard days.insert(summary.day).inserted else {
                throw HealthError(.invalidArgument, "activity summary \(summary.dayText) is given twice")
            }
        }
        return try activitySummaryTable.apply(
            subject: subject, summaries.map { (key: $0.day, value: $0) }, beforeApplying: beforeApplying)
    }

    /// `subject`'s activity summaries by day, from `first` through `last` (day numbers, either open).
    public func activitySummaries(subject: String, from first: Int? = nil, through last: Int? = nil) throws
        -> [ActivitySummary]
    {
        try SampleRules.validate(subject: subject)
        let low = first ?? ActivitySummary.days.lowerBound
        let high = last ?? ActivitySummary.days.upperBound
        guard low <= high else { return [] }
        return activitySummaryTable.entries(subject: subject, in: low...high).map(\.value)
    }
}
