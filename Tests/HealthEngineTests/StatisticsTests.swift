import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Three samples (0–60 s: 10, 120–180 s: 20, 150–210 s: 30) give every figure a hand-computed value.
private let threeRows = [Row(0, sec(60), 10), Row(sec(120), sec(180), 20), Row(sec(150), sec(210), 30)]

@Suite("Statistics")
struct StatisticsTests {
    /// Every option against a type of each style: the figure's hand-computed value, or nil for a rejection.
    @Test(
        "every option with every aggregation style",
        arguments: [
            ("stepCount", StatisticsOptions.cumulativeSum, 60.0 as Double?),
            ("stepCount", .discreteAverage, nil), ("stepCount", .discreteMin, nil), ("stepCount", .discreteMax, nil),
            ("bodyMass", .cumulativeSum, nil), ("bodyMass", .discreteAverage, 20), ("bodyMass", .discreteMin, 10),
            ("bodyMass", .discreteMax, 30),
            ("heartRate", .cumulativeSum, nil), ("heartRate", .discreteAverage, 20), ("heartRate", .discreteMin, 10),
            ("heartRate", .discreteMax, 30),
            ("environmentalAudioExposure", .cumulativeSum, nil),
            ("environmentalAudioExposure", .discreteAverage, 25.682017240669949),  // 10·log10((10+100+1000)/3)
            ("environmentalAudioExposure", .discreteMin, 10), ("environmentalAudioExposure", .discreteMax, 30),
        ])
    func optionMatrix(type: String, option: StatisticsOptions, expected: Double?) throws {
        let store = try store(type: type, rows: threeRows)
        var statistics: Statistics?
        let error = healthError {
            statistics = try store.statistics(subject: "anna", type: try QuantityType.named(type), options: option)
        }
        guard let expected else {
            #expect(error?.code.rawValue == ErrorCode.invalidOptions.rawValue)
            #expect(error?.message.contains(option.description) == true)
            #expect(error?.message.contains(type) == true)
            return
        }
        #expect(error == nil)
        let figures = try #require(statistics).figures
        let value: Double? =
            switch option {
            case .cumulativeSum: figures.sum
            case .discreteAverage: figures.average
            case .discreteMin: figures.minimum
            default: figures.maximum
            }
        #expect(close(value, expected, tolerance: 1e-12))
        let present = [figures.sum, figures.average, figures.minimum, figures.maximum].compactMap { $0 }
        #expect(present.count == 1, "only the requested figure is set")
        #expect(statistics?.start == 0 && statistics?.end == sec(210))
    }

    @Test(
        "mostRecent, duration and separateBySource go with every style",
        arguments: [
            "stepCount", "bodyMass", "heartRate", "environmentalAudioExposure",
        ])
    func optionsForEveryStyle(type: String) throws {
        let store = try store(type: type, rows: threeRows)
        let statistics = try store.statistics(
            subject: "anna", type: try QuantityType.named(type), options: [.mostRecent, .duration, .separateBySource])
        #expect(statistics.figures.mostRecent == MostRecent(value: 30, start: sec(150), end: sec(210)))
        #expect(statistics.figures.duration == sec(150))
        #expect(statistics.bySource.map(\.source) == [phone])
        #expect(statistics.bySource.first?.figures.duration == sec(150))
    }

    @Test("an empty or unknown option set is rejected")
    func rejectsEmptyOptions() throws {
        let store = try store(type: "stepCount", rows: threeRows)
        for options in [StatisticsOptions(), StatisticsOptions(rawValue: 1 << 9)] {
            let error = healthError { _ = try store.statistics(subject: "anna", type: "stepCount", options: options) }
            #expect(error?.code.rawValue == ErrorCode.invalidOptions.rawValue)
        }
    }

    private static let burst: [Row] = (0..<10).map { (i: Int) -> Row in Row(sec(Double(i)), sec(Double(i)), 150) }

    static let timeWeightedCases: [([Row], Double)] = [
        // One isolated reading.
        ([Row(0, 0, 60)], 60.0),
        // 30 s apart: 22.5·60 + 30·(60+90)/2 + 22.5·90 = 5625 over 75 s.
        ([Row(0, 0, 60), Row(sec(30), sec(30), 90)], 75),
        // Then a reading 70 s later: + 22.5·90 + 22.5·120 on both sides of the gap, 22.5·120 trailing:
        // 11025 over 120 s (the arithmetic mean would be 90).
        ([Row(0, 0, 60), Row(sec(30), sec(30), 90), Row(sec(100), sec(100), 120)], 91.875),
        // Joined over a 30 s gap: 1350 + 30·90 + (22.5·120 + 22.5·60 across the 170 s gap) + 1350 = 9450 / 120 s.
        ([Row(0, 0, 60), Row(sec(30), sec(30), 120), Row(sec(200), sec(200), 60)], 78.75),
        // The rule is continuous at the 45 s threshold: joined (45·90) and not joined (22.5·60 + 22.5·120) weigh
        // the same, 10800 / 135 s either way.
        ([Row(0, 0, 60), Row(sec(45), sec(45), 120), Row(sec(200), sec(200), 60)], 80),
        ([Row(0, 0, 60), Row(sec(46), sec(46), 120), Row(sec(200), sec(200), 60)], 80),
        // A 10-reading burst at 150 a second apart (54 s, 8100) and one reading of 60 an hour later (45 s, 2700):
        // 10800 / 99 s, where the arithmetic mean is 141.8.
        (burst + [Row(sec(3600), sec(3600), 60)], 10800.0 / 99),
        // A sample with a duration weighs its duration: 80·60 + 45·100 over 105 s.
        ([Row(0, sec(60), 80), Row(sec(120), sec(120), 100)], 9300.0 / 105),
        // Shuffled input gives the same answer as sorted input.
        ([Row(sec(100), sec(100), 120), Row(0, 0, 60), Row(sec(30), sec(30), 90)], 91.875),
    ]

    @Test("time-weighted heart-rate average on hand-computed examples", arguments: timeWeightedCases)
    func timeWeightedAverage(rows: [Row], expected: Double) throws {
        let statistics = try store(type: "heartRate", rows: rows).statistics(
            subject: "anna", type: "heartRate", options: .discreteAverage)
        #expect(close(statistics.figures.average, expected, tolerance: 1e-12))
    }

    @Test(
        "sound-level energy average on hand-computed examples",
        arguments: [
            // 60 dB and 80 dB for an hour each: 10·log10((10⁶ + 10⁸) / 2).
            ([Row(0, sec(3600), 60), Row(sec(3600), sec(7200), 80)], 77.032913781186615),
            // 70 dB for 30 min and 90 dB for 10 min: 10·log10((30·10⁷ + 10·10⁹) / 40).
            ([Row(0, sec(1800), 70), Row(sec(1800), sec(2400), 90)], 84.107772333772098),
            // A point reading weighs one microsecond: next to an hour of 60 dB, 100 dB barely counts.
            ([Row(0, sec(3600), 60), Row(sec(10), sec(10), 100)], 60.0000120628),
            // Point readings alone: their plain energy mean.
            ([Row(0, 0, 60), Row(sec(10), sec(10), 80)], 77.032913781186615),
        ])
    func energyAverage(rows: [Row], expected: Double) throws {
        let statistics = try store(type: "environmentalAudioExposure", rows: rows).statistics(
            subject: "anna", type: "environmentalAudioExposure", options: .discreteAverage)
        #expect(close(statistics.figures.average, expected, tolerance: 1e-9))
    }

    @Test("duration counts overlapping time once, across sources too")
    func durationWithOverlaps() throws {
        let rows = [
            Row(0, sec(10), 1, phone), Row(sec(5), sec(15), 1, watch), Row(sec(20), sec(30), 1, phone),
            Row(sec(25), sec(26), 1, watch), Row(sec(40), sec(40), 1, phone), Row(sec(29), sec(31), 1, fitApp),
        ]
        let statistics = try store(type: "stepCount", rows: rows).statistics(
            subject: "anna", type: "stepCount", options: [.duration, .separateBySource])
        #expect(statistics.figures.duration == sec(26))  // 0–15 and 20–31
        let bySource = Dictionary(uniqueKeysWithValues: statistics.bySource.map { ($0.source, $0.figures.duration) })
        #expect(bySource == [phone: sec(20), watch: sec(11), fitApp: sec(2)])
    }

    @Test("mostRecent takes the latest end, then the latest start")
    func mostRecent() throws {
        let store = try store(
            type: "bodyMass",
            rows: [
                Row(0, sec(100), 70), Row(sec(50), sec(100), 71), Row(sec(60), sec(90), 72), Row(sec(95), sec(99), 73),
            ])
        let first = try store.statistics(subject: "anna", type: "bodyMass", options: .mostRecent)
        #expect(first.figures.mostRecent == MostRecent(value: 71, start: sec(50), end: sec(100)))
        _ = try store.insert(makeBatch(type: "bodyMass", rows: [Row(sec(100), sec(100), 74)]))
        let second = try store.statistics(subject: "anna", type: "bodyMass", options: .mostRecent, unit: "g")
        #expect(second.figures.mostRecent == MostRecent(value: 74_000, start: sec(100), end: sec(100)))
    }

    @Test("mostRecent agrees with a full scan when long samples end last", arguments: [21, 22, 23, 24] as [UInt64])
    func mostRecentRandom(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        var rows: [Row] = []
        for i in 0..<300 {
            let start = Timestamp.random(in: 0..<1000, using: &generator)
            let long = Int.random(in: 0..<50, using: &generator) == 0
            let length =
                long
                ? Timestamp.random(in: 0..<2000, using: &generator) : Timestamp.random(in: 0..<3, using: &generator)
            rows.append(Row(start, start + length, Double(i)))
        }
        let store = try store(type: "bodyMass", rows: rows)
        // Among rows with the latest (end, start), the one stored last: the batch's order is kept for equal starts.
        let best = rows.max { ($0.end, $0.start) <= ($1.end, $1.start) }!
        let statistics = try store.statistics(subject: "anna", type: "bodyMass", options: .mostRecent)
        #expect(statistics.figures.mostRecent == MostRecent(value: best.value, start: best.start, end: best.end))
    }

    @Test(
        "figures come in the requested unit; durations stay in microseconds",
        arguments: [
            ("distanceWalkingRunning", StatisticsOptions.cumulativeSum, "km", 0.06),
            ("bodyTemperature", .discreteAverage, "degF", 68.0),  // 20 °C
            ("bodyTemperature", .discreteMax, "K", 303.15),
            ("heartRate", .discreteAverage, "count/s", 1.0 / 3),
            ("heartRate", .discreteMin, "count/hr", 600),
        ])
    func unitsOnOutput(type: String, option: StatisticsOptions, unit: String, expected: Double) throws {
        let store = try store(type: type, rows: threeRows)
        let statistics = try store.statistics(
            subject: "anna", type: try QuantityType.named(type), options: [option, .duration],
            unit: HealthUnit(parsing: unit))
        let value =
            statistics.figures.sum ?? statistics.figures.average ?? statistics.figures.minimum
            ?? statistics.figures.maximum
        #expect(close(value, expected, tolerance: 1e-9))
        #expect(statistics.figures.duration == sec(150))
    }

    @Test(
        "no matching sample answers noData, not zero",
        arguments: [
            ("nobody", SampleFilter.all),
            ("anna", SampleFilter(date: DatePredicate(start: sec(1000)))),
            ("anna", SampleFilter(sources: ["Somebody else's phone"])),
            ("anna", SampleFilter(uuids: [UUID()])),
        ])
    func noData(subject: String, filter: SampleFilter) throws {
        let store = try store(type: "stepCount", rows: threeRows)
        let error = healthError {
            _ = try store.statistics(subject: subject, type: "stepCount", filter: filter, options: .cumulativeSum)
        }
        #expect(error?.code.rawValue == ErrorCode.noData.rawValue)
        #expect(error?.message.contains("stepCount") == true)
    }

    @Test("a plain statistics query counts matching samples in full, without clipping at the predicate")
    func noClipping() throws {
        let store = try store(type: "stepCount", rows: [Row(0, sec(100), 100), Row(sec(200), sec(300), 50)])
        let statistics = try store.statistics(
            subject: "anna", type: "stepCount",
            filter: SampleFilter(date: DatePredicate(start: sec(50), end: sec(250))),
            options: .cumulativeSum)
        #expect(statistics.figures.sum == 150)
        #expect(statistics.start == 0 && statistics.end == sec(300))
    }
}
