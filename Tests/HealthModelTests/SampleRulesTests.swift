import HealthModel
import TestSupport
import Testing

/// ``SampleRules/accepts(start:end:value:cumulative:categoryValues:)`` is the column pass a batch goes through
/// before its rows are checked one by one: it must accept exactly what ``SampleRules/validate(start:end:value:type:)``
/// accepts, or a bad row would be stored (too lenient) or a good batch checked twice (too strict).
@Suite("Sample rules as one pass")
struct SampleRulesTests {
    @Test("the column pass accepts exactly the rows validate accepts, for quantity and category types")
    func acceptsAgreesWithValidate() throws {
        var random = SplitMix64(seed: TestSeed.value(31))
        let instants: [Timestamp] = [
            SupportedInstants.range.lowerBound - 1, SupportedInstants.range.lowerBound, -1, 0, 60_000_000,
            SupportedInstants.range.upperBound, SupportedInstants.range.upperBound + 1, .min, .max,
        ]
        let values: [Double] = [
            0, -0.0, 1, -1, 2, 3, 4.5, -7, .infinity, -.infinity, .nan, 1e308, .leastNonzeroMagnitude,
        ]
        let types = try ["stepCount", "heartRate", "bodyMass", "sleepAnalysis", "mindfulSession"].map {
            try QuantityType.named($0)
        }
        for type in types {
            for _ in 0..<600 {
                let start = instants.randomElement(using: &random)!
                let end = Bool.random(using: &random) ? start : instants.randomElement(using: &random)!
                let value = values.randomElement(using: &random)!
                let validated = (try? SampleRules.validate(start: start, end: end, value: value, type: type)) != nil
                let accepted = SampleRules.accepts(
                    start: start, end: end, value: value, cumulative: type.style == .cumulative,
                    categoryValues: type.categoryValues)
                #expect(accepted == validated, "\(type) \(start)…\(end) value \(value)")
            }
        }
    }
}
