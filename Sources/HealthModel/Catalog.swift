/// The quantity-type catalog of HEALTHKIT.md §1.
extension QuantityType {
    /// Every known quantity type, in catalog order (``QuantityType/index`` is the position here).
    public static let all: [QuantityType] = {
        var types: [QuantityType] = []
        // Each distinct unit string parsed once (most types share a few units). A list, not a dictionary: a
        // dictionary of a type not used elsewhere costs hkq's start more (its first use looks up the key's
        // conformances) than these few comparisons.
        var parsed: [(unit: String, parsed: HealthUnit)] = []
        for (position, entry) in QuantityCatalog.entries.enumerated() {
            let known = parsed.first { $0.unit == entry.1 }?.parsed
            let type = quantity(at: position, unit: known)
            if known == nil { parsed.append((entry.1, type.canonicalUnit)) }
            types.append(type)
        }
        for position in CategoryCatalog.entries.indices { types.append(category(at: position)) }
        return types
    }()

    /// The quantity type of catalog entry `position`, with its unit parsed unless `unit` gives it.
    private static func quantity(at position: Int, unit: HealthUnit? = nil) -> QuantityType {
        let (identifier, symbol, style) = QuantityCatalog.entries[position]
        // The catalog's unit strings are fixed and covered by tests; a failure here is a build defect.
        let canonical = unit ?? (try! HealthUnit(parsing: symbol))
        return QuantityType(identifier: identifier, canonicalUnit: canonical, style: style, index: position)
    }

    /// The category type of category catalog entry `position`; ``all`` lists them after the quantity types.
    private static func category(at position: Int) -> QuantityType {
        let (identifier, values) = CategoryCatalog.entries[position]
        return QuantityType(
            identifier: identifier, canonicalUnit: unitless, style: .category,
            index: QuantityCatalog.entries.count + position, categoryValues: values)
    }

    /// A category type's canonical unit: none.
    private static let unitless = try! HealthUnit(parsing: "()")

    /// The quantity types of ``all``, without the category types.
    public static let quantities: [QuantityType] = all.filter { !$0.isCategory }
    /// The category types of ``all`` (HEALTHKIT.md §12).
    public static let categories: [QuantityType] = all.filter(\.isCategory)

    /// Every type by its short and its full identifier: built once, then read without a lock.
    private static let byIdentifier: [String: QuantityType] = {
        var index: [String: QuantityType] = [:]
        index.reserveCapacity(all.count * 2)
        for type in all {
            index[type.identifier] = type
            index[type.fullIdentifier] = type
        }
        return index
    }()

    /// Looks a type up by short (`stepCount`) or full (`HKQuantityTypeIdentifierStepCount`) identifier, spelled
    /// exactly as Apple spells it (`HKQuantityTypeIdentifierVO2Max`).
    ///
    /// Category types are found the same way (`sleepAnalysis`, `HKCategoryTypeIdentifierSleepAnalysis`).
    ///
    /// Throws ``ErrorCode/unknownQuantityType`` naming the string and suggesting the nearest known name.
    public static func named(_ name: String) throws -> QuantityType {
        if let type = byIdentifier[name] { return type }
        let kind = hasPrefix(categoryPrefix, name) ? "category" : "quantity"
        var message = "unknown \(kind) type \"\(name)\""
        if let nearest = nearestIdentifier(to: name), let type = byIdentifier[nearest] {
            // Suggest in the form the caller used: full identifier for a full one, short otherwise.
            let suggestion =
                hasFullPrefix(name) || hasPrefix(categoryPrefix, name) ? type.fullIdentifier : type.identifier
            message += "; did you mean \"\(suggestion)\"?"
        }
        throw HealthError(.unknownQuantityType, message)
    }

    /// The catalog's short identifier closest to `name` by edit distance (case-insensitive), if any is close.
    ///
    /// A full-identifier prefix (`HKQuantityTypeIdentifier`, in any case) is ignored.
    public static func nearestIdentifier(to name: String) -> String? {
        let short =
            hasFullPrefix(name)
            ? String(name.dropFirst(fullPrefix.count))
            : hasPrefix(categoryPrefix, name) ? String(name.dropFirst(categoryPrefix.count)) : name
        if let alias = aliases[short.lowercased()] { return alias }
        return Suggestion.nearest(to: short, among: all.lazy.map(\.identifier))
    }
}

extension QuantityType {
    /// Everyday names people type for a type, suggested when they are not a type's identifier.
    fileprivate static let aliases: [String: String] = [
        "steps": "stepCount", "step": "stepCount", "hr": "heartRate", "pulse": "heartRate", "bpm": "heartRate",
        "weight": "bodyMass", "distance": "distanceWalkingRunning", "calories": "activeEnergyBurned",
        "energy": "activeEnergyBurned", "spo2": "oxygenSaturation", "hrv": "heartRateVariabilitySDNN",
        "temperature": "bodyTemperature", "glucose": "bloodGlucose", "flights": "flightsClimbed",
        "bmi": "bodyMassIndex", "water": "dietaryWater", "vo2max": "vo2Max",
    ]

    /// Whether `name` starts with `HKQuantityTypeIdentifier`, ignoring case.
    fileprivate static func hasFullPrefix(_ name: String) -> Bool { hasPrefix(fullPrefix, name) }

    /// Whether `name` starts with `prefix`, ignoring case, and goes on after it.
    fileprivate static func hasPrefix(_ prefix: String, _ name: String) -> Bool {
        name.utf8.count > prefix.utf8.count && name.lowercased().hasPrefix(prefix.lowercased())
    }
}

/// "Did you mean": the candidate closest to a mistyped word, for error messages (types, units, commands, options).
public enum Suggestion {
    /// The candidate nearest to `word`, ignoring case: the shortest one `word` abbreviates (three letters or more),
    /// else the nearest by edit distance if it is close enough to be a typo (one edit for words of up to four
    /// letters, else two, or a third of the word's length for long words; swapping two neighbours is one edit).
    /// `nil` when nothing is that close.
    public static func nearest(to word: String, among candidates: some Sequence<String>) -> String? {
        let lowered = word.lowercased()
        if lowered.count >= 3,
            let abbreviated = candidates.filter({ $0.lowercased().hasPrefix(lowered) }).min(by: { $0.count < $1.count })
        {
            return abbreviated
        }
        let wanted = Array(lowered.utf8)
        var best: (distance: Int, candidate: String)?
        for candidate in candidates {
            let distance = editDistance(wanted, Array(candidate.lowercased().utf8))
            if distance < (best?.distance ?? Int.max) { best = (distance, candidate) }
        }
        guard let best, best.distance <= (wanted.count <= 4 ? 1 : max(2, wanted.count / 3)) else { return nil }
        return best.candidate
    }
}

/// Edit distance between two byte strings: insertions, deletions, substitutions and swaps of two neighbouring
/// bytes, each one edit (the optimal string alignment distance).
func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
    if a.isEmpty { return b.count }
    var beforePrevious = Array(0...b.count)
    var previous = beforePrevious
    var current = previous
    for i in 1...a.count {
        current[0] = i
        for j in stride(from: 1, through: b.count, by: 1) {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                current[j] = min(current[j], beforePrevious[j - 2] + 1)
            }
        }
        (beforePrevious, previous, current) = (previous, current, beforePrevious)
    }
    return previous[b.count]
}

enum QuantityCatalog {
    private static let C = AggregationStyle.cumulative
    private static let A = AggregationStyle.discreteArithmetic
    private static let TW = AggregationStyle.discreteTemporallyWeighted
    private static let ECL = AggregationStyle.discreteEquivalentContinuousLevel

    static let entries: [(String, String, AggregationStyle)] = [
        // Activity and mobility, cumulative.
        ("stepCount", "count", C),
        ("distanceWalkingRunning", "m", C),
        ("distanceCycling", "m", C),
        ("distanceWheelchair", "m", C),
        ("distanceSwimming", "m", C),
        ("distanceDownhillSnowSports", "m", C),
        ("activeEnergyBurned", "kcal", C),
        ("basalEnergyBurned", "kcal", C),
        ("flightsClimbed", "count", C),
        ("appleExerciseTime", "min", C),
        ("appleStandTime", "min", C),
        ("appleMoveTime", "min", C),
        ("pushCount", "count", C),
        ("swimmingStrokeCount", "count", C),
        ("timeInDaylight", "min", C),
        ("numberOfTimesFallen", "count", C),
        ("inhalerUsage", "count", C),
        ("insulinDelivery", "IU", C),
        // Nutrition, cumulative.
        ("dietaryEnergyConsumed", "kcal", C),
        ("dietaryWater", "mL", C),
        ("dietaryProtein", "g", C),
        ("dietaryCarbohydrates", "g", C),
        ("dietaryFatTotal", "g", C),
        ("dietarySugar", "g", C),
        ("dietaryFiber", "g", C),
        ("dietaryCaffeine", "g", C),
        ("dietarySodium", "g", C),
        ("dietaryPotassium", "g", C),
        ("dietaryCalcium", "g", C),
        ("dietaryIron", "g", C),
        ("dietaryCholesterol", "g", C),
        // Hearing, equivalent continuous level.
        ("environmentalAudioExposure", "dBASPL", ECL),
        ("headphoneAudioExposure", "dBASPL", ECL),
        ("environmentalSoundReduction", "dBASPL", ECL),
        // Heart and lungs.
        ("heartRate", "count/min", TW),
        ("restingHeartRate", "count/min", A),
        ("walkingHeartRateAverage", "count/min", A),
        ("heartRateRecoveryOneMinute", "count/min", A),
        ("heartRateVariabilitySDNN", "ms", A),
        ("atrialFibrillationBurden", "%", TW),
        ("respiratoryRate", "count/min", A),
        ("oxygenSaturation", "%", A),
        ("forcedVitalCapacity", "L", A),
        ("forcedExpiratoryVolume1", "L", A),
        ("peakExpiratoryFlowRate", "L/min", A),
        ("vo2Max", "mL/(kg*min)", A),
        // Vital signs and lab results.
        ("bodyTemperature", "degC", A),
        ("basalBodyTemperature", "degC", A),
        ("bloodGlucose", "mg/dL", A),
        ("bloodPressureSystolic", "mmHg", A),
        ("bloodPressureDiastolic", "mmHg", A),
        ("electrodermalActivity", "S", A),
        ("uvExposure", "count", A),
        // Body measurements.
        ("bodyMass", "kg", A),
        ("height", "m", A),
        ("bodyMassIndex", "count", A),
        ("bodyFatPercentage", "%", A),
        ("leanBodyMass", "kg", A),
        ("waistCircumference", "m", A),
        // Mobility and fitness.
        ("walkingSpeed", "m/s", A),
        ("runningSpeed", "m/s", A),
        ("cyclingSpeed", "m/s", A),
        ("stairAscentSpeed", "m/s", A),
        ("stairDescentSpeed", "m/s", A),
        ("walkingStepLength", "m", A),
        ("runningStrideLength", "m", A),
        ("sixMinuteWalkTestDistance", "m", A),
        ("walkingAsymmetryPercentage", "%", A),
        ("walkingDoubleSupportPercentage", "%", A),
        ("appleWalkingSteadiness", "%", A),
        ("runningPower", "W", A),
        ("cyclingPower", "W", A),
        ("runningGroundContactTime", "ms", A),
        ("runningVerticalOscillation", "cm", A),
        ("cyclingCadence", "count/min", A),
        ("cyclingFunctionalThresholdPower", "W", A),
        ("physicalEffort", "kcal/(kg*hr)", A),
        ("underwaterDepth", "m", A),
        ("waterTemperature", "degC", A),
        // The rest of Apple's list (HKTypeIdentifiers.h), after the types above so that their indices stay.
        ("appleSleepingWristTemperature", "degC", A),
        ("appleSleepingBreathingDisturbances", "count", A),
        ("peripheralPerfusionIndex", "%", A),
        ("bloodAlcoholContent", "%", A),
        ("numberOfAlcoholicBeverages", "count", C),
        ("nikeFuel", "count", C),
        ("distanceRowing", "m", C),
        ("distancePaddleSports", "m", C),
        ("distanceCrossCountrySkiing", "m", C),
        ("distanceSkatingSports", "m", C),
        ("rowingSpeed", "m/s", A),
        ("paddleSportsSpeed", "m/s", A),
        ("crossCountrySkiingSpeed", "m/s", A),
        ("dietaryFatMonounsaturated", "g", C),
        ("dietaryFatPolyunsaturated", "g", C),
        ("dietaryFatSaturated", "g", C),
        ("dietaryVitaminA", "g", C),
        ("dietaryVitaminB6", "g", C),
        ("dietaryVitaminB12", "g", C),
        ("dietaryVitaminC", "g", C),
        ("dietaryVitaminD", "g", C),
        ("dietaryVitaminE", "g", C),
        ("dietaryVitaminK", "g", C),
        ("dietaryThiamin", "g", C),
        ("dietaryRiboflavin", "g", C),
        ("dietaryNiacin", "g", C),
        ("dietaryFolate", "g", C),
        ("dietaryBiotin", "g", C),
        ("dietaryPantothenicAcid", "g", C),
        ("dietaryPhosphorus", "g", C),
        ("dietaryIodine", "g", C),
        ("dietaryMagnesium", "g", C),
        ("dietaryZinc", "g", C),
        ("dietarySelenium", "g", C),
        ("dietaryCopper", "g", C),
        ("dietaryManganese", "g", C),
        ("dietaryChromium", "g", C),
        ("dietaryMolybdenum", "g", C),
        ("dietaryChloride", "g", C),
    ]

    /// Apple's spelling of the full identifier where it is not `HKQuantityTypeIdentifier` + the short name with
    /// its first letter capitalised.
    static let fullSpellings: [String: String] = [
        "vo2Max": "VO2Max",
        "uvExposure": "UVExposure",
    ]
    /// ``fullSpellings`` the other way: the short identifier of a full identifier's tail.
    static let shortSpellings = Dictionary(uniqueKeysWithValues: fullSpellings.map { ($1, $0) })
}
