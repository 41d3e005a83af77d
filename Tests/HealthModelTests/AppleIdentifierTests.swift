import Testing

@testable import HealthModel

/// Every catalog identifier against Apple's spelling: the `HKQuantityTypeIdentifier` constants of HealthKit's
/// `HKTypeIdentifiers.h` (iOS 18.1 SDK), copied here one per line. Exports carry exactly these strings.
@Suite("Apple's quantity type identifiers")
struct AppleIdentifierTests {
    /// Apple's constants the catalog does not carry yet, and why.
    static let notCarried: [String: String] = [
        "HKQuantityTypeIdentifierEstimatedWorkoutEffortScore": "unit appleEffortScore is not in the unit parser",
        "HKQuantityTypeIdentifierWorkoutEffortScore": "unit appleEffortScore is not in the unit parser",
    ]

    static let apple: [String] = """
        AppleSleepingWristTemperature BodyFatPercentage BodyMass BodyMassIndex ElectrodermalActivity Height
        LeanBodyMass WaistCircumference
        ActiveEnergyBurned AppleExerciseTime AppleMoveTime AppleStandTime BasalEnergyBurned CrossCountrySkiingSpeed
        CyclingCadence CyclingFunctionalThresholdPower CyclingPower CyclingSpeed DistanceCrossCountrySkiing
        DistanceCycling DistanceDownhillSnowSports DistancePaddleSports DistanceRowing DistanceSkatingSports
        DistanceSwimming DistanceWalkingRunning DistanceWheelchair EstimatedWorkoutEffortScore FlightsClimbed
        NikeFuel PaddleSportsSpeed PhysicalEffort PushCount RowingSpeed RunningPower RunningSpeed StepCount
        SwimmingStrokeCount UnderwaterDepth WorkoutEffortScore
        EnvironmentalAudioExposure EnvironmentalSoundReduction HeadphoneAudioExposure
        AtrialFibrillationBurden HeartRate HeartRateRecoveryOneMinute HeartRateVariabilitySDNN
        PeripheralPerfusionIndex RestingHeartRate VO2Max WalkingHeartRateAverage
        AppleWalkingSteadiness RunningGroundContactTime RunningStrideLength RunningVerticalOscillation
        SixMinuteWalkTestDistance StairAscentSpeed StairDescentSpeed WalkingAsymmetryPercentage
        WalkingDoubleSupportPercentage WalkingSpeed WalkingStepLength
        DietaryBiotin DietaryCaffeine DietaryCalcium DietaryCarbohydrates DietaryChloride DietaryCholesterol
        DietaryChromium DietaryCopper DietaryEnergyConsumed DietaryFatMonounsaturated DietaryFatPolyunsaturated
        DietaryFatSaturated DietaryFatTotal DietaryFiber DietaryFolate DietaryIodine DietaryIron DietaryMagnesium
        DietaryManganese DietaryMolybdenum DietaryNiacin DietaryPantothenicAcid DietaryPhosphorus DietaryPotassium
        DietaryProtein DietaryRiboflavin DietarySelenium DietarySodium DietarySugar DietaryThiamin DietaryVitaminA
        DietaryVitaminB12 DietaryVitaminB6 DietaryVitaminC DietaryVitaminD DietaryVitaminE DietaryVitaminK
        DietaryWater DietaryZinc
        BloodAlcoholContent BloodPressureDiastolic BloodPressureSystolic InsulinDelivery NumberOfAlcoholicBeverages
        NumberOfTimesFallen TimeInDaylight UVExposure WaterTemperature
        BasalBodyTemperature
        AppleSleepingBreathingDisturbances ForcedExpiratoryVolume1 ForcedVitalCapacity InhalerUsage OxygenSaturation
        PeakExpiratoryFlowRate RespiratoryRate
        BloodGlucose BodyTemperature
        """.split(whereSeparator: \.isWhitespace).map { "HKQuantityTypeIdentifier" + $0 }

    @Test("every catalog identifier is spelled as Apple spells it, and every Apple type is carried or explained")
    func spelling() {
        let catalog = Set(QuantityType.quantities.map(\.fullIdentifier))
        let expected = Set(Self.apple).subtracting(Self.notCarried.keys)
        #expect(catalog.subtracting(expected).sorted() == [], "catalog identifiers Apple does not spell so")
        #expect(expected.subtracting(catalog).sorted() == [], "Apple identifiers missing from the catalog")
        #expect(Set(Self.apple).count == Self.apple.count)
    }

    @Test("Apple's exact identifiers are found; a regular capitalisation of an irregular one gets Apple's spelling")
    func lookup() throws {
        #expect(try QuantityType.named("HKQuantityTypeIdentifierVO2Max").identifier == "vo2Max")
        #expect(try QuantityType.named("HKQuantityTypeIdentifierUVExposure").identifier == "uvExposure")
        #expect(throws: HealthError.self) { try QuantityType.named("HKQuantityTypeIdentifierVo2Max") }
        #expect(QuantityType.nearestIdentifier(to: "HKQuantityTypeIdentifierVo2Max") == "vo2Max")
        #expect(try QuantityType.named("vo2Max").fullIdentifier == "HKQuantityTypeIdentifierVO2Max")
        for identifier in Self.apple where Self.notCarried[identifier] == nil {
            #expect(try QuantityType.named(identifier).fullIdentifier == identifier)
        }
        // Every type, category types included, by either identifier; other spellings and the other kind's prefix
        // are not names.
        for type in QuantityType.all {
            #expect(try QuantityType.named(type.fullIdentifier) == type)
            #expect(try QuantityType.named(type.identifier) == type)
        }
        for wrong in [
            "HKQuantityTypeIdentifierstepCount", "HKCategoryTypeIdentifierStepCount",
            "HKQuantityTypeIdentifierSleepAnalysis", "HKQuantityTypeIdentifier", "StepCount",
        ] {
            #expect(throws: HealthError.self, "\(wrong)") { try QuantityType.named(wrong) }
        }
    }
}
