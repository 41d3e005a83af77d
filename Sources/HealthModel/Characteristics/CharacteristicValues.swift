extension CharacteristicKey {
    /// HealthKit's values of the key in short form (`HKBiologicalSex`: female, male, other), `nil` for the date of
    /// birth. The store takes any value of the right form (a newer export may carry a value added later); hkq
    /// offers and checks these.
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
