import Testing

@testable import HealthModel

/// The quantity-type catalog of HEALTHKIT.md §1: units, styles, lookup and suggestions.
@Suite struct CatalogTests {
    @Test func catalogHasEveryTypeOnceWithItsIndex() {
        #expect(QuantityType.all.count == QuantityCatalog.entries.count + CategoryCatalog.entries.count)
        #expect(QuantityType.quantities.count == 79 + 39)
        #expect(QuantityType.categories.count == CategoryCatalog.entries.count)
        #expect(Set(QuantityType.all.map(\.identifier)).count == QuantityType.all.count)
        for (position, type) in QuantityType.all.enumerated() { #expect(type.index == position) }
    }

    @Test(arguments: QuantityCatalog.entries.map(\.0))
    func canonicalUnitParsesAndFitsItsType(identifier: String) throws {
        let type = try QuantityType.named(identifier)
        let reparsed = try HealthUnit(parsing: type.canonicalUnit.symbol)
        #expect(reparsed == type.canonicalUnit)
        #expect(type.canonicalUnit.isCompatible(with: reparsed))
        try SampleRules.validate(unit: reparsed, for: type)
        #expect(try reparsed.convert(1, to: type.canonicalUnit) == 1)
    }

    @Test(arguments: QuantityType.all)
    func lookupByShortAndFullIdentifier(type: QuantityType) throws {
        #expect(try QuantityType.named(type.identifier) == type)
        #expect(try QuantityType.named(type.fullIdentifier) == type)
        #expect(
            type.fullIdentifier.hasPrefix(type.isCategory ? "HKCategoryTypeIdentifier" : "HKQuantityTypeIdentifier"))
    }

    /// Spot checks of the table in HEALTHKIT.md §1.
    @Test(arguments: [
        ("stepCount", "count", AggregationStyle.cumulative),
        ("heartRate", "count/min", .discreteTemporallyWeighted),
        ("atrialFibrillationBurden", "%", .discreteTemporallyWeighted),
        ("environmentalAudioExposure", "dBASPL", .discreteEquivalentContinuousLevel),
        ("bloodGlucose", "mg/dL", .discreteArithmetic),
        ("vo2Max", "mL/(kg*min)", .discreteArithmetic),
        ("dietaryWater", "mL", .cumulative),
        ("insulinDelivery", "IU", .cumulative),
        ("bodyTemperature", "degC", .discreteArithmetic),
        ("electrodermalActivity", "S", .discreteArithmetic),
        ("peakExpiratoryFlowRate", "L/min", .discreteArithmetic),
    ])
    func tableEntries(identifier: String, unit: String, style: AggregationStyle) throws {
        let type = try QuantityType.named(identifier)
        #expect(type.canonicalUnit.symbol == unit)
        #expect(type.style == style)
    }

    @Test func fullIdentifierIsApplesSpelling() throws {
        #expect(try QuantityType.named("stepCount").fullIdentifier == "HKQuantityTypeIdentifierStepCount")
        #expect(try QuantityType.named("vo2Max").fullIdentifier == "HKQuantityTypeIdentifierVO2Max")
        #expect(try QuantityType.named("HKQuantityTypeIdentifierHeartRate").identifier == "heartRate")
    }

    @Test(arguments: [
        ("stepcount", #"unknown quantity type "stepcount"; did you mean "stepCount"?"#),
        ("heartrate", #"unknown quantity type "heartrate"; did you mean "heartRate"?"#),
        ("stepCont", #"unknown quantity type "stepCont"; did you mean "stepCount"?"#),
        ("bodyMas", #"unknown quantity type "bodyMas"; did you mean "bodyMass"?"#),
        (
            "HKQuantityTypeIdentifierStepcount",
            #"unknown quantity type "HKQuantityTypeIdentifierStepcount"; did you mean "HKQuantityTypeIdentifierStepCount"?"#
        ),
        (
            "hkquantitytypeidentifierheartrate",
            #"unknown quantity type "hkquantitytypeidentifierheartrate"; did you mean "HKQuantityTypeIdentifierHeartRate"?"#
        ),
        ("xyzzy", #"unknown quantity type "xyzzy""#),
        ("", #"unknown quantity type """#),
    ])
    func unknownTypesAreNamedWithASuggestion(name: String, message: String) {
        #expect(throws: HealthError(.unknownQuantityType, message)) { try QuantityType.named(name) }
    }

    @Test func nearestIdentifierIgnoresCaseAndThePrefix() {
        #expect(QuantityType.nearestIdentifier(to: "STEPCOUNT") == "stepCount")
        #expect(QuantityType.nearestIdentifier(to: "HKQuantityTypeIdentifierBodymass") == "bodyMass")
        #expect(QuantityType.nearestIdentifier(to: "completely unrelated") == nil)
    }

    @Test func editDistanceCountsInsertionsDeletionsAndSubstitutions() {
        func distance(_ a: String, _ b: String) -> Int { editDistance(Array(a.utf8), Array(b.utf8)) }
        #expect(distance("", "abc") == 3)
        #expect(distance("abc", "") == 3)
        #expect(distance("kitten", "sitting") == 3)
        #expect(distance("same", "same") == 0)
        #expect(distance("tpye", "type") == 1)
        #expect(distance("ca", "abc") == 3)
    }

    @Test func shortWordsAreSuggestedOnlyOneEditAway() {
        let fields = ["type", "start", "end", "value", "unit", "source", "uuid", "metadata"]
        #expect(Suggestion.nearest(to: "nope", among: fields) == nil)
        #expect(Suggestion.nearest(to: "tpye", among: fields) == "type")
        #expect(Suggestion.nearest(to: "vaule", among: fields) == "value")
        #expect(Suggestion.nearest(to: "stop", among: fields) == nil)
    }
}
