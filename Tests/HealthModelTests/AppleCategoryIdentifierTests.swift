import Testing

@testable import HealthModel

/// Every category type against Apple's spelling: the `HKCategoryTypeIdentifier` constants of HealthKit's
/// `HKTypeIdentifiers.h` (iOS 18.1 SDK, the deprecated `AudioExposureEvent` included), copied here, and the raw
/// values of `HKCategoryValues.h` for the enumerations (HEALTHKIT.md §12).
@Suite("Apple's category type identifiers and values")
struct AppleCategoryIdentifierTests {
    static let apple: [String] = """
        AppleStandHour
        EnvironmentalAudioExposureEvent HeadphoneAudioExposureEvent
        HighHeartRateEvent IrregularHeartRhythmEvent LowCardioFitnessEvent LowHeartRateEvent
        MindfulSession
        AppleWalkingSteadinessEvent
        HandwashingEvent ToothbrushingEvent
        BleedingAfterPregnancy BleedingDuringPregnancy CervicalMucusQuality Contraceptive InfrequentMenstrualCycles
        IntermenstrualBleeding IrregularMenstrualCycles Lactation MenstrualFlow OvulationTestResult
        PersistentIntermenstrualBleeding Pregnancy PregnancyTestResult ProgesteroneTestResult
        ProlongedMenstrualPeriods SexualActivity
        SleepApneaEvent
        SleepAnalysis
        AbdominalCramps Acne AppetiteChanges BladderIncontinence Bloating BreastPain ChestTightnessOrPain Chills
        Constipation Coughing Diarrhea Dizziness DrySkin Fainting Fatigue Fever GeneralizedBodyAche HairLoss Headache
        Heartburn HotFlashes LossOfSmell LossOfTaste LowerBackPain MemoryLapse MoodChanges Nausea NightSweats
        PelvicPain RapidPoundingOrFlutteringHeartbeat RunnyNose ShortnessOfBreath SinusCongestion SkippedHeartbeat
        SleepChanges SoreThroat VaginalDryness Vomiting Wheezing
        AudioExposureEvent
        """.split(whereSeparator: \.isWhitespace).map { "HKCategoryTypeIdentifier" + $0 }

    @Test("every category identifier is spelled as Apple spells it, and every Apple category type is carried")
    func spelling() throws {
        let catalog = Set(QuantityType.categories.map(\.fullIdentifier))
        #expect(catalog.subtracting(Self.apple).sorted() == [], "catalog identifiers Apple does not spell so")
        #expect(Set(Self.apple).subtracting(catalog).sorted() == [], "Apple identifiers missing from the catalog")
        #expect(Set(Self.apple).count == Self.apple.count)
        for identifier in Self.apple {
            let type = try QuantityType.named(identifier)
            #expect(type.isCategory)
            #expect(type.style == .category)
            #expect(type.fullIdentifier == identifier)
        }
    }

    /// Raw values as `HKCategoryValues.h` defines them, by type, as (lowerCamel name, raw value).
    static let expectedValues: [(String, [(String, Int)])] = [
        (
            "sleepAnalysis",
            [
                ("inBed", 0), ("asleepUnspecified", 1), ("awake", 2), ("asleepCore", 3), ("asleepDeep", 4),
                ("asleepREM", 5),
            ]
        ),
        ("appleStandHour", [("stood", 0), ("idle", 1)]),
        ("mindfulSession", [("notApplicable", 0)]),
        ("highHeartRateEvent", [("notApplicable", 0)]),
        ("lowHeartRateEvent", [("notApplicable", 0)]),
        ("irregularHeartRhythmEvent", [("notApplicable", 0)]),
        ("toothbrushingEvent", [("notApplicable", 0)]),
        ("handwashingEvent", [("notApplicable", 0)]),
        ("sexualActivity", [("notApplicable", 0)]),
        ("intermenstrualBleeding", [("notApplicable", 0)]),
        ("menstrualFlow", [("unspecified", 1), ("light", 2), ("medium", 3), ("heavy", 4), ("none", 5)]),
        ("environmentalAudioExposureEvent", [("momentaryLimit", 1)]),
        ("headphoneAudioExposureEvent", [("notApplicable", 0), ("sevenDayLimit", 1)]),
        ("cervicalMucusQuality", [("dry", 1), ("sticky", 2), ("creamy", 3), ("watery", 4), ("eggWhite", 5)]),
        (
            "ovulationTestResult",
            [("negative", 1), ("luteinizingHormoneSurge", 2), ("indeterminate", 3), ("estrogenSurge", 4)]
        ),
        ("pregnancyTestResult", [("negative", 1), ("positive", 2), ("indeterminate", 3)]),
        (
            "contraceptive",
            [
                ("unspecified", 1), ("implant", 2), ("injection", 3), ("intrauterineDevice", 4),
                ("intravaginalRing", 5), ("oral", 6), ("patch", 7),
            ]
        ),
        ("headache", [("unspecified", 0), ("notPresent", 1), ("mild", 2), ("moderate", 3), ("severe", 4)]),
        ("moodChanges", [("present", 0), ("notPresent", 1)]),
        ("appetiteChanges", [("unspecified", 0), ("noChange", 1), ("decreased", 2), ("increased", 3)]),
        ("lowCardioFitnessEvent", [("lowFitness", 1)]),
        (
            "appleWalkingSteadinessEvent",
            [("initialLow", 1), ("initialVeryLow", 2), ("repeatLow", 3), ("repeatVeryLow", 4)]
        ),
    ]

    @Test func rawValues() throws {
        for (identifier, values) in Self.expectedValues {
            let set = try #require(try QuantityType.named(identifier).categoryValues)
            #expect(set.values.map(\.name) == values.map(\.0), "\(identifier)")
            #expect(set.values.map(\.rawValue) == values.map(\.1), "\(identifier)")
        }
    }

    @Test("export value names map to the enumeration, old ones included; unknown names map to nothing")
    func exportNames() throws {
        let sleep = try #require(try QuantityType.named("sleepAnalysis").categoryValues)
        #expect(sleep.rawValue(named: "HKCategoryValueSleepAnalysisInBed") == 0)
        #expect(sleep.rawValue(named: "HKCategoryValueSleepAnalysisAsleep") == 1)
        #expect(sleep.rawValue(named: "HKCategoryValueSleepAnalysisAsleepUnspecified") == 1)
        #expect(sleep.rawValue(named: "HKCategoryValueSleepAnalysisAwake") == 2)
        #expect(sleep.rawValue(named: "HKCategoryValueSleepAnalysisAsleepCore") == 3)
        #expect(sleep.rawValue(named: "HKCategoryValueSleepAnalysisAsleepDeep") == 4)
        #expect(sleep.rawValue(named: "HKCategoryValueSleepAnalysisAsleepREM") == 5)
        #expect(sleep.rawValue(named: "asleepcore") == 3)
        #expect(sleep.rawValue(named: "5") == 5)
        #expect(sleep.rawValue(named: "6") == nil)
        #expect(sleep.rawValue(named: "HKCategoryValueSleepAnalysisNapping") == nil)
        #expect(sleep.fullName(of: CategoryValue("asleepREM", 5)) == "HKCategoryValueSleepAnalysisAsleepREM")
        let flow = try #require(try QuantityType.named("menstrualFlow").categoryValues)
        #expect(flow.rawValue(named: "HKCategoryValueMenstrualFlowHeavy") == 4)
        #expect(flow.rawValue(named: "HKCategoryValueVaginalBleedingHeavy") == 4)
        let stand = try #require(try QuantityType.named("appleStandHour").categoryValues)
        #expect(stand.rawValue(named: "HKCategoryValueAppleStandHourIdle") == 1)
        let event = try #require(try QuantityType.named("mindfulSession").categoryValues)
        #expect(event.rawValue(named: "HKCategoryValueNotApplicable") == 0)
    }

    @Test("a value outside the enumeration is refused naming the value and the type; a category takes no unit")
    func validation() throws {
        let sleep = try QuantityType.named("sleepAnalysis")
        let unit = try sleep.unit(parsing: "")
        try SampleRules.validate(start: 0, end: 60, value: 5, type: sleep)
        for bad in [6.0, -1, 2.5] {
            let error = #expect(throws: HealthError.self) {
                try SampleRules.validate(start: 0, end: 60, value: bad, type: sleep)
            }
            #expect(error?.code.rawValue == ErrorCode.invalidSample.rawValue)
            #expect(error?.message.contains("sleepAnalysis") == true)
            #expect(error?.message.contains("is not a value of category type") == true)
        }
        #expect(unit.symbol == "()")
        let error = #expect(throws: HealthError.self) { try sleep.unit(parsing: "count") }
        #expect(error?.code.rawValue == ErrorCode.incompatibleUnit.rawValue)
        #expect(throws: HealthError.self) { try SampleRules.validate(unit: HealthUnit(parsing: "count"), for: sleep) }
        let unknown = #expect(throws: HealthError.self) {
            try QuantityType.named("HKCategoryTypeIdentifierSleepAnalysys")
        }
        #expect(
            unknown?.message
                == #"unknown category type "HKCategoryTypeIdentifierSleepAnalysys"; did you mean "HKCategoryTypeIdentifierSleepAnalysis"?"#
        )
    }
}
