extension CharacteristicKey {
    /// HealthKit's values of the key in short form (`HKBiologicalSex`: female, male, other), `nil` for the date of
    /// birth. The importer, hkq and hkd take only these (``Characteristics/validated(_:_:)``); a value of the right
    /// form stored before they did is still read back.
    public var knownValues: [String]? {
        switch self {
        case .dateOfBirth: nil
        case .biologicalSex: ["female", "male", "other"]
        case .bloodType:
            ["aPositive", "aNegative", "bPositive", "bNegative", "abPositive", "abNegative", "oPositive", "oNegative"]
        case .fitzpatrickSkinType: ["I", "II", "III", "IV", "V", "VI"]
        case .wheelchairUse: ["no", "yes"]
        case .activityMoveMode: ["activeEnergy", "appleMoveTime"]
        case .cardioFitnessMedicationsUse: ["none", "calciumChannelBlocker", "betaBlocker"]
        }
    }
}
