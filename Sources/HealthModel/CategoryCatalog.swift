/// One value of a category type's enumeration: its lowerCamel name and HealthKit's raw value.
public struct CategoryValue: Hashable, Sendable {
    /// The lowerCamel case name, e.g. `asleepCore`.
    public let name: String
    /// HealthKit's raw value, e.g. 3.
    public let rawValue: Int

    init(_ name: String, _ rawValue: Int) {
        self.name = name
        self.rawValue = rawValue
    }
}

/// A category type's value enumeration (`HKCategoryValueSleepAnalysis`, `HKCategoryValue` …), HEALTHKIT.md §12.
///
/// Names are accepted in three spellings: the lowerCamel case name (`asleepCore`), the name Apple Health exports
/// write (`HKCategoryValueSleepAnalysisAsleepCore`, the enumeration's name followed by the UpperCamel case name),
/// and older export names kept as aliases (`HKCategoryValueSleepAnalysisAsleep` for `asleepUnspecified`).
public struct CategoryValueSet: Hashable, Sendable {
    /// Apple's enumeration name, e.g. `HKCategoryValueSleepAnalysis`.
    public let enumeration: String
    /// The values in raw-value order.
    public let values: [CategoryValue]
    /// Other full names exports have written, and the raw value each stands for.
    public let aliases: [String: Int]
    /// A value that says where the person was rather than what they did (sleep's `inBed`): across sources it
    /// yields to any other value, so a phone's bedtime never hides a watch's stages (HEALTHKIT.md §12).
    public let envelope: Int?

    init(_ enumeration: String, _ values: [CategoryValue], aliases: [String: Int] = [:], envelope: Int? = nil) {
        self.enumeration = enumeration
        self.values = values.sorted { $0.rawValue < $1.rawValue }
        self.aliases = aliases
        self.envelope = envelope
    }

    /// The value with raw value `rawValue`, if the enumeration has one.
    public func value(raw rawValue: Int) -> CategoryValue? { values.first { $0.rawValue == rawValue } }

    /// The lowerCamel name of `rawValue`, or its decimal digits when the enumeration has no such value.
    public func name(of rawValue: Int) -> String { value(raw: rawValue)?.name ?? String(rawValue) }

    /// The name an Apple Health export writes for `value`, e.g. `HKCategoryValueSleepAnalysisAsleepCore`.
    public func fullName(of value: CategoryValue) -> String {
        enumeration + value.name.prefix(1).uppercased() + value.name.dropFirst()
    }

    /// Whether `value` is an integer the enumeration lists.
    public func contains(_ value: Double) -> Bool {
        guard let raw = Int(exactly: value) else { return false }
        return self.value(raw: raw) != nil
    }

    /// The raw value `name` stands for: a lowerCamel name (any case), a full export name, an alias, or the raw
    /// value's decimal digits; `nil` when it names none of the enumeration's values.
    public func rawValue(named name: String) -> Int? {
        if let raw = Int(name) { return value(raw: raw)?.rawValue }
        if let raw = aliases[name] { return raw }
        let lowered = name.lowercased()
        for value in values where value.name.lowercased() == lowered || fullName(of: value) == name {
            return value.rawValue
        }
        return nil
    }

    /// The raw value a sample takes when its record has none: `HKCategoryValue.notApplicable` (0) for a type whose
    /// enumeration is only that (mindfulSession, the heart events, toothbrushing …: iOS 12 exports write mindful
    /// sessions without a `value`); `nil` for every other type, whose samples must name their value.
    public var valueWhenAbsent: Int? {
        guard enumeration == CategoryCatalog.notApplicable.enumeration, values.count == 1 else { return nil }
        return values[0].rawValue
    }

    /// Every value as `name raw`, for error messages: `inBed 0, asleepUnspecified 1, …`.
    public var listing: String { values.map { "\($0.name) \($0.rawValue)" }.joined(separator: ", ") }
}

/// The category-type catalog of HEALTHKIT.md §12: Apple's `HKCategoryTypeIdentifier` constants (iOS 18.1 SDK) and
/// the value enumeration each uses.
enum CategoryCatalog {
    static let notApplicable = CategoryValueSet("HKCategoryValue", [CategoryValue("notApplicable", 0)])
    static let sleepAnalysis = CategoryValueSet(
        "HKCategoryValueSleepAnalysis",
        [
            CategoryValue("inBed", 0), CategoryValue("asleepUnspecified", 1), CategoryValue("awake", 2),
            CategoryValue("asleepCore", 3), CategoryValue("asleepDeep", 4), CategoryValue("asleepREM", 5),
        ],
        aliases: ["HKCategoryValueSleepAnalysisAsleep": 1, "asleep": 1], envelope: 0)
    static let standHour = CategoryValueSet(
        "HKCategoryValueAppleStandHour", [CategoryValue("stood", 0), CategoryValue("idle", 1)])
    static let bleeding = CategoryValueSet(
        "HKCategoryValueVaginalBleeding",
        [
            CategoryValue("unspecified", 1), CategoryValue("light", 2), CategoryValue("medium", 3),
            CategoryValue("heavy", 4), CategoryValue("none", 5),
        ],
        aliases: [
            "HKCategoryValueMenstrualFlowUnspecified": 1, "HKCategoryValueMenstrualFlowLight": 2,
            "HKCategoryValueMenstrualFlowMedium": 3, "HKCategoryValueMenstrualFlowHeavy": 4,
            "HKCategoryValueMenstrualFlowNone": 5,
        ])
    static let severity = CategoryValueSet(
        "HKCategoryValueSeverity",
        [
            CategoryValue("unspecified", 0), CategoryValue("notPresent", 1), CategoryValue("mild", 2),
            CategoryValue("moderate", 3), CategoryValue("severe", 4),
        ])
    static let presence = CategoryValueSet(
        "HKCategoryValuePresence", [CategoryValue("present", 0), CategoryValue("notPresent", 1)])
    static let appetite = CategoryValueSet(
        "HKCategoryValueAppetiteChanges",
        [
            CategoryValue("unspecified", 0), CategoryValue("noChange", 1), CategoryValue("decreased", 2),
            CategoryValue("increased", 3),
        ])
    static let cervicalMucus = CategoryValueSet(
        "HKCategoryValueCervicalMucusQuality",
        [
            CategoryValue("dry", 1), CategoryValue("sticky", 2), CategoryValue("creamy", 3),
            CategoryValue("watery", 4), CategoryValue("eggWhite", 5),
        ])
    static let ovulation = CategoryValueSet(
        "HKCategoryValueOvulationTestResult",
        [
            CategoryValue("negative", 1), CategoryValue("luteinizingHormoneSurge", 2),
            CategoryValue("indeterminate", 3), CategoryValue("estrogenSurge", 4),
        ],
        aliases: ["HKCategoryValueOvulationTestResultPositive": 2, "positive": 2])
    static let testResult = CategoryValueSet(
        "HKCategoryValuePregnancyTestResult",
        [CategoryValue("negative", 1), CategoryValue("positive", 2), CategoryValue("indeterminate", 3)])
    static let progesterone = CategoryValueSet(
        "HKCategoryValueProgesteroneTestResult",
        [CategoryValue("negative", 1), CategoryValue("positive", 2), CategoryValue("indeterminate", 3)])
    static let contraceptive = CategoryValueSet(
        "HKCategoryValueContraceptive",
        [
            CategoryValue("unspecified", 1), CategoryValue("implant", 2), CategoryValue("injection", 3),
            CategoryValue("intrauterineDevice", 4), CategoryValue("intravaginalRing", 5), CategoryValue("oral", 6),
            CategoryValue("patch", 7),
        ])
    static let environmentalAudio = CategoryValueSet(
        "HKCategoryValueEnvironmentalAudioExposureEvent", [CategoryValue("momentaryLimit", 1)])
    /// Apple's header gives this type `HKCategoryValueHeadphoneAudioExposureEvent` (sevenDayLimit 1); HEALTHKIT.md
    /// §12 lists it with the not-applicable types, so 0 is accepted as well.
    static let headphoneAudio = CategoryValueSet(
        "HKCategoryValueHeadphoneAudioExposureEvent",
        [CategoryValue("notApplicable", 0), CategoryValue("sevenDayLimit", 1)],
        aliases: ["HKCategoryValueNotApplicable": 0])
    static let audioExposure = CategoryValueSet(
        "HKCategoryValueAudioExposureEvent", [CategoryValue("loudEnvironment", 1)])
    static let lowCardioFitness = CategoryValueSet(
        "HKCategoryValueLowCardioFitnessEvent", [CategoryValue("lowFitness", 1)])
    static let walkingSteadiness = CategoryValueSet(
        "HKCategoryValueAppleWalkingSteadinessEvent",
        [
            CategoryValue("initialLow", 1), CategoryValue("initialVeryLow", 2), CategoryValue("repeatLow", 3),
            CategoryValue("repeatVeryLow", 4),
        ])

    /// Every category type: short identifier and value enumeration, in the header's order.
    static let entries: [(String, CategoryValueSet)] =
        [
            ("sleepAnalysis", sleepAnalysis),
            ("appleStandHour", standHour),
            ("mindfulSession", notApplicable),
            ("highHeartRateEvent", notApplicable),
            ("lowHeartRateEvent", notApplicable),
            ("irregularHeartRhythmEvent", notApplicable),
            ("lowCardioFitnessEvent", lowCardioFitness),
            ("environmentalAudioExposureEvent", environmentalAudio),
            ("headphoneAudioExposureEvent", headphoneAudio),
            ("audioExposureEvent", audioExposure),
            ("appleWalkingSteadinessEvent", walkingSteadiness),
            ("toothbrushingEvent", notApplicable),
            ("handwashingEvent", notApplicable),
            ("sleepApneaEvent", notApplicable),
            ("menstrualFlow", bleeding),
            ("intermenstrualBleeding", notApplicable),
            ("persistentIntermenstrualBleeding", notApplicable),
            ("infrequentMenstrualCycles", notApplicable),
            ("irregularMenstrualCycles", notApplicable),
            ("prolongedMenstrualPeriods", notApplicable),
            ("bleedingAfterPregnancy", bleeding),
            ("bleedingDuringPregnancy", bleeding),
            ("sexualActivity", notApplicable),
            ("cervicalMucusQuality", cervicalMucus),
            ("ovulationTestResult", ovulation),
            ("pregnancyTestResult", testResult),
            ("progesteroneTestResult", progesterone),
            ("contraceptive", contraceptive),
            ("lactation", notApplicable),
            ("pregnancy", notApplicable),
            ("appetiteChanges", appetite),
            ("moodChanges", presence),
            ("sleepChanges", presence),
        ]
        + symptoms.map { ($0, severity) }

    /// The symptom types, all rated with `HKCategoryValueSeverity`.
    static let symptoms = [
        "abdominalCramps", "acne", "bladderIncontinence", "bloating", "breastPain", "chestTightnessOrPain", "chills",
        "constipation", "coughing", "diarrhea", "dizziness", "drySkin", "fainting", "fatigue", "fever",
        "generalizedBodyAche", "hairLoss", "headache", "heartburn", "hotFlashes", "lossOfSmell", "lossOfTaste",
        "lowerBackPain", "memoryLapse", "nausea", "nightSweats", "pelvicPain", "rapidPoundingOrFlutteringHeartbeat",
        "runnyNose", "shortnessOfBreath", "sinusCongestion", "skippedHeartbeat", "soreThroat", "vaginalDryness",
        "vomiting", "wheezing",
    ]
}
