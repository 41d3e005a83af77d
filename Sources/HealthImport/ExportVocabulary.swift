import HealthModel

/// What the importer keeps of an export: for each element it imports, by its parent, the attributes it reads
/// (HEALTHKIT.md §11, §13; docs/HEALTHKIT.md "What an import keeps"). The one place that says so, and what the
/// summary's skip counts follow:
///
/// - an element not listed (`<ClinicalRecord>`, `<Audiogram>`, a record's `<HeartRateVariabilityMetadataList>` …)
///   is skipped whole and counted under its name; what it holds goes with it, uncounted;
/// - an attribute a listed element has but the importer does not read is counted as `Element attribute`
///   (`Location horizontalAccuracy`);
/// - `creationDate` is read: it tells two elements of the same content apart (``ElementIdentity``), though no
///   object keeps it.
///
/// Attributes of `<Record>` are checked by ``RecordMapper`` on its own faster path, with the same list.
enum ExportVocabulary {
    /// The kept attributes of each kept element, keyed by `Parent/Element`.
    static let kept: [String: Set<String>] = [
        "HealthData/Me": Set(CharacteristicKey.allCases.map(\.exportAttribute)),
        "HealthData/Record": record,
        "Record/MetadataEntry": metadataEntry,
        "HealthData/Correlation": [
            "type", "sourceName", "sourceVersion", "device", "creationDate", "startDate", "endDate",
        ],
        "Correlation/MetadataEntry": metadataEntry,
        "Correlation/Record": record,
        "HealthData/Workout": [
            "workoutActivityType", "duration", "durationUnit", "totalDistance", "totalDistanceUnit",
            "totalEnergyBurned", "totalEnergyBurnedUnit", "sourceName", "sourceVersion", "device", "creationDate",
            "startDate", "endDate",
        ],
        "Workout/MetadataEntry": metadataEntry,
        "Workout/WorkoutEvent": ["type", "date", "duration", "durationUnit"],
        "Workout/WorkoutStatistics": ["type", "startDate", "endDate", "sum", "average", "minimum", "maximum", "unit"],
        "Workout/WorkoutRoute": [],
        "WorkoutRoute/FileReference": ["path"],
        "WorkoutRoute/Location": ["date", "latitude", "longitude", "altitude", "course", "speed"],
        "HealthData/ActivitySummary": Set(
            ["dateComponents", "activeEnergyBurnedUnit"] + ActivitySummary.Field.allCases.map(\.rawValue)),
    ]

    /// The attributes of a `<Record>` the importer reads.
    static let record: Set<String> = [
        "type", "unit", "value", "sourceName", "sourceVersion", "device", "creationDate", "startDate", "endDate",
    ]

    private static let metadataEntry: Set<String> = ["key", "value"]

    /// The kept attributes of the element `name` inside `parent`, `nil` when the element is not imported.
    static func keptAttributes(of name: String, in parent: String) -> Set<String>? {
        kept[parent + "/" + name]
    }
}
