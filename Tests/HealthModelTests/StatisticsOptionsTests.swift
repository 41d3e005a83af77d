import Testing

import HealthModel

/// Which statistics options go with which aggregation style (HEALTHKIT.md §5).
@Suite struct StatisticsOptionsTests {
    /// One type of each aggregation style.
    static let typeOfStyle: [AggregationStyle: String] = [
        .cumulative: "stepCount", .discreteArithmetic: "bodyMass", .discreteTemporallyWeighted: "heartRate",
        .discreteEquivalentContinuousLevel: "environmentalAudioExposure", .category: "sleepAnalysis",
    ]

    /// The message for an option that does not fit a style, or nil when it fits.
    static func expectedProblem(option: String, style: AggregationStyle, type: String) -> String? {
        switch (style, option) {
        case (.category, "cumulativeSum"), (.category, "discreteAverage"), (.category, "discreteMin"),
            (.category, "discreteMax"):
            "\(option) is not valid for category type \(type)"
        case (.category, _): nil
        case (_, "separateByValue"): "separateByValue is valid only for category types, not \(type)"
        case (.cumulative, "discreteAverage"), (.cumulative, "discreteMin"), (.cumulative, "discreteMax"):
            "\(option) is not valid for cumulative type \(type)"
        case (.discreteArithmetic, "cumulativeSum"), (.discreteTemporallyWeighted, "cumulativeSum"),
            (.discreteEquivalentContinuousLevel, "cumulativeSum"):
            "cumulativeSum is not valid for discrete type \(type)"
        default: nil
        }
    }

    @Test(arguments: AggregationStyle.allCases, StatisticsOptions.named.map(\.name))
    func eachOptionWithEachStyle(style: AggregationStyle, optionName: String) throws {
        let type = try QuantityType.named(Self.typeOfStyle[style]!)
        #expect(type.style == style)
        let option = StatisticsOptions.named.first { $0.name == optionName }!.option
        if let problem = Self.expectedProblem(option: optionName, style: style, type: type.identifier) {
            #expect(throws: HealthError(.invalidOptions, problem)) { try option.validate(for: type) }
            // A valid companion does not rescue an invalid option.
            #expect(throws: HealthError(.invalidOptions, problem)) {
                try option.union([.mostRecent, .separateBySource]).validate(for: type)
            }
        } else {
            try option.validate(for: type)
            try option.union([.mostRecent, .duration, .separateBySource]).validate(for: type)
        }
    }

    @Test(arguments: QuantityType.all)
    func everyCatalogTypeFollowsItsStyle(type: QuantityType) throws {
        for (name, option) in StatisticsOptions.named {
            let valid = (try? option.validate(for: type)) != nil
            #expect(
                valid == (Self.expectedProblem(option: name, style: type.style, type: type.identifier) == nil),
                "\(name)")
        }
    }

    @Test func typicalCombinations() throws {
        let steps = try QuantityType.named("stepCount")
        let heart = try QuantityType.named("heartRate")
        try StatisticsOptions([.cumulativeSum, .separateBySource, .duration, .mostRecent]).validate(for: steps)
        try StatisticsOptions([.discreteAverage, .discreteMin, .discreteMax, .mostRecent]).validate(for: heart)
        #expect(throws: HealthError(.invalidOptions, "discreteMin is not valid for cumulative type stepCount")) {
            try StatisticsOptions([.cumulativeSum, .discreteMin, .discreteMax]).validate(for: steps)
        }
        #expect(throws: HealthError(.invalidOptions, "cumulativeSum is not valid for discrete type heartRate")) {
            try StatisticsOptions([.discreteAverage, .cumulativeSum]).validate(for: heart)
        }
    }

    @Test func emptyAndUnknownOptionsAreRejected() throws {
        let steps = try QuantityType.named("stepCount")
        #expect(throws: HealthError(.invalidOptions, "no statistics option given for stepCount")) {
            try StatisticsOptions().validate(for: steps)
        }
        #expect(throws: HealthError(.invalidOptions, "unknown statistics option bits 0x101")) {
            try StatisticsOptions(rawValue: 0x101).validate(for: steps)
        }
    }

    @Test func descriptionListsNamesInBitOrder() {
        #expect(StatisticsOptions().description == "none")
        #expect(StatisticsOptions([.separateBySource, .cumulativeSum]).description == "cumulativeSum,separateBySource")
        #expect(StatisticsOptions.named.count == 8)
        for (bit, entry) in StatisticsOptions.named.enumerated() { #expect(entry.option.rawValue == 1 << bit) }
    }
}
