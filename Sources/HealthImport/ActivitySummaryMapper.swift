import HealthModel

/// Maps an export's `<ActivitySummary>` element to an ``ActivitySummary`` (HEALTHKIT.md §13): the local day of
/// `dateComponents`, each value and goal present, and `activeEnergyBurnedUnit` as written.
enum ActivitySummaryMapper {
    /// The summary of `attributes`, or a ``Rejection`` naming the attribute that is not valid.
    static func summary(_ attributes: [XMLAttribute]) throws -> ActivitySummary {
        let fields = WorkoutMapper.strings(attributes)
        guard let text = fields["dateComponents"] else {
            throw Rejection("ActivitySummary without dateComponents")
        }
        guard let day = CivilCalendar.day(parsing: text) else {
            throw Rejection(
                "ActivitySummary dateComponents is not a date",
                "ActivitySummary dateComponents \"\(text.prefix(40))\" is not a YYYY-MM-DD date")
        }
        var summary = ActivitySummary(day: day)
        for field in ActivitySummary.Field.allCases {
            guard let text = fields[field.rawValue] else { continue }
            guard let value = Double(text), value.isFinite, value >= 0 else {
                throw Rejection(
                    "ActivitySummary \(field.rawValue) is not a number ≥ 0",
                    "ActivitySummary \(field.rawValue) \"\(text.prefix(40))\" is not a number ≥ 0")
            }
            summary.values[field] = value
        }
        if summary.values[.activeEnergyBurned] != nil || summary.values[.activeEnergyBurnedGoal] != nil {
            summary.activeEnergyBurnedUnit = fields["activeEnergyBurnedUnit"] ?? "kcal"
        }
        do {
            try summary.validate()
        } catch let error as HealthError {
            throw Rejection("ActivitySummary is not valid", error.message)
        }
        return summary
    }

    /// The local day of an `<ExportDate value="2024-07-01 09:00:00 +0200">`: the day the export was taken, whose
    /// summary is still incomplete.
    static func exportDay(_ attributes: [XMLAttribute]) -> Int? {
        guard let value = WorkoutMapper.strings(attributes)["value"] else { return nil }
        return CivilCalendar.day(parsing: value.prefix(10))
    }
}
