import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// Named samples around S = 100 s and E = 200 s, each on an edge of HEALTHKIT.md §4's table.
private let edgeSamples: [(name: String, start: Double, end: Double)] = [
    ("a", 50, 99),  // ends just before S
    ("b", 50, 100),  // ends exactly at S
    ("c", 99, 150),  // starts before S, ends inside
    ("d", 100, 100),  // a point at S
    ("e", 100, 150),  // starts at S
    ("f", 150, 199),  // inside
    ("g", 150, 200),  // ends exactly at E
    ("h", 199, 250),  // starts before E, ends after
    ("i", 200, 200),  // a point at E
    ("j", 200, 250),  // starts at E
    ("k", 0, 300),  // spans both bounds
    ("l", 10, 20),  // long before
    ("m", 300, 400),  // long after
]

/// A predicate case: bounds, options, and the names that match, worked out by hand from the table.
struct PredicateCase: CustomTestStringConvertible, Sendable {
    var start: Double?
    var end: Double?
    var strictStart: Bool
    var strictEnd: Bool
    var expected: String

    var testDescription: String {
        "[\(start.map { "\($0)" } ?? "-"), \(end.map { "\($0)" } ?? "-")) strictStart=\(strictStart) strictEnd=\(strictEnd)"
    }

    var predicate: DatePredicate {
        DatePredicate(
            start: start.map(sec), end: end.map(sec), strictStartDate: strictStart, strictEndDate: strictEnd)
    }
}

@Suite("Sample queries")
struct SampleQueryTests {
    static let predicateCases: [PredicateCase] = [
        PredicateCase(start: 100, end: 200, strictStart: false, strictEnd: false, expected: "bcdefghk"),
        PredicateCase(start: 100, end: 200, strictStart: true, strictEnd: false, expected: "defgh"),
        PredicateCase(start: 100, end: 200, strictStart: false, strictEnd: true, expected: "bcdef"),
        PredicateCase(start: 100, end: 200, strictStart: true, strictEnd: true, expected: "def"),
        PredicateCase(start: 100, end: nil, strictStart: false, strictEnd: false, expected: "bcdefghijkm"),
        PredicateCase(start: 100, end: nil, strictStart: true, strictEnd: false, expected: "defghijm"),
        PredicateCase(start: nil, end: 200, strictStart: false, strictEnd: false, expected: "abcdefghkl"),
        PredicateCase(start: nil, end: 200, strictStart: false, strictEnd: true, expected: "abcdefl"),
        PredicateCase(start: nil, end: nil, strictStart: false, strictEnd: false, expected: "abcdefghijklm"),
        PredicateCase(start: 100, end: 100, strictStart: false, strictEnd: false, expected: "bck"),
        PredicateCase(start: 150, end: 150, strictStart: true, strictEnd: true, expected: ""),
    ]

    @Test("date predicates follow HEALTHKIT.md §4 exactly, boundaries included", arguments: predicateCases)
    func datePredicate(testCase: PredicateCase) throws {
        // A second copy of the edge set far later (value 0, left out of the names), so binary search must
        // find the right one; open end bounds reach it, so it is counted separately.
        let store = HealthStore()
        let rows = edgeSamples.map { Row(sec($0.start), sec($0.end), Double($0.name.unicodeScalars.first!.value)) }
        let farRows = edgeSamples.map { Row(sec($0.start + 1e6), sec($0.end + 1e6), 0) }
        _ = try store.insert(makeBatch(type: "heartRate", rows: farRows + rows))
        let result = try store.samples(
            subject: "anna", type: "heartRate", filter: SampleFilter(date: testCase.predicate))
        let names = String(result.values.filter { $0 > 0 }.map { Character(UnicodeScalar(UInt8($0))) }.sorted())
        #expect(names == testCase.expected)
        let farCount = result.values.filter { $0 == 0 }.count
        #expect(farCount == (testCase.end == nil ? edgeSamples.count : 0))
    }

    @Test("random predicates over random samples agree with a full scan", arguments: [1, 2, 3, 4] as [UInt64])
    func randomPredicates(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let store = HealthStore()
        var all: [(Timestamp, Timestamp)] = []
        for _ in 0..<5 {
            let rows = (0..<200).map { _ -> Row in
                let start = Timestamp.random(in: 0..<10_000, using: &generator)
                let length =
                    Bool.random(using: &generator)
                    ? 0 : Timestamp.random(in: 0..<(seed == 4 ? 5000 : 50), using: &generator)
                return Row(start, start + length, 1)
            }
            all += rows.map { ($0.start, $0.end) }
            _ = try store.insert(makeBatch(type: "heartRate", rows: rows))
        }
        for _ in 0..<200 {
            let s = Bool.random(using: &generator) ? Timestamp.random(in: -100..<10_100, using: &generator) : nil
            let e = Bool.random(using: &generator) ? Timestamp.random(in: (s ?? -100)..<10_200, using: &generator) : nil
            let predicate = DatePredicate(
                start: s, end: e, strictStartDate: Bool.random(using: &generator),
                strictEndDate: Bool.random(using: &generator))
            let result = try store.samples(subject: "anna", type: "heartRate", filter: SampleFilter(date: predicate))
            let expected = all.filter { predicate.matches(start: $0.0, end: $0.1) }.map(\.0).sorted()
            #expect(result.starts == expected, "\(predicate)")
        }
    }

    private static let sortRows = [
        Row(sec(10), sec(100), 1), Row(sec(20), sec(30), 2), Row(sec(30), sec(40), 3), Row(sec(40), sec(45), 4),
        Row(sec(50), sec(50), 5),
    ]

    @Test(
        "sort orders and limits",
        arguments: [
            (SampleSort.startAscending, 0, [1.0, 2, 3, 4, 5]),
            (.startAscending, 2, [1, 2]),
            (.startDescending, 0, [5, 4, 3, 2, 1]),
            (.startDescending, 3, [5, 4, 3]),
            (.endAscending, 0, [2, 3, 4, 5, 1]),
            (.endAscending, 4, [2, 3, 4, 5]),
            (.endDescending, 0, [1, 5, 4, 3, 2]),
            (.endDescending, 1, [1]),
            (.startAscending, 99, [1, 2, 3, 4, 5]),
        ])
    func sortAndLimit(sort: SampleSort, limit: Int, expected: [Double]) throws {
        let store = HealthStore()
        // Inserted in two shuffled batches.
        _ = try store.insert(makeBatch(type: "heartRate", rows: [Self.sortRows[3], Self.sortRows[0]]))
        _ = try store.insert(
            makeBatch(type: "heartRate", rows: [Self.sortRows[4], Self.sortRows[2], Self.sortRows[1]]))
        let result = try store.samples(subject: "anna", type: "heartRate", sort: sort, limit: limit)
        #expect(result.values == expected)
        #expect(result.count == expected.count)
        #expect(result.ends.count == expected.count && result.uuids.count == expected.count)
    }

    @Test(
        "values come back in the requested unit",
        arguments: [
            ("bodyMass", 70.0, "lb", 154.3236),
            ("bodyMass", 70.0, "g", 70_000),
            ("bodyTemperature", 37.0, "degF", 98.6),
            ("bodyTemperature", 37.0, "K", 310.15),
            ("heartRate", 90.0, "count/s", 1.5),
            ("distanceWalkingRunning", 1609.344, "mi", 1),
            ("oxygenSaturation", 0.97, "%", 0.97),
        ])
    func convertsOnOutput(type: String, canonical: Double, unit: String, expected: Double) throws {
        let store = try store(type: type, rows: [Row(0, 0, canonical)])
        let result = try store.samples(
            subject: "anna", type: try QuantityType.named(type), unit: HealthUnit(parsing: unit))
        #expect(close(result.values.first, expected, tolerance: 1e-5))
        #expect(result.unit.symbol == unit)
    }

    @Test(
        "an incompatible or unparsable output unit, a bad limit or predicate is an error",
        arguments: [
            ("stepCount", "kg", 0, DatePredicate.all, ErrorCode.incompatibleUnit.rawValue),
            ("stepCount", "blorp", 0, .all, ErrorCode.invalidUnit.rawValue),
            ("stepCount", "count", -1, .all, ErrorCode.invalidArgument.rawValue),
            ("stepCount", "count", 0, DatePredicate(start: 10, end: 5), ErrorCode.invalidPredicate.rawValue),
            ("stepz", "count", 0, .all, ErrorCode.unknownQuantityType.rawValue),
        ])
    func queryErrors(type: String, unit: String, limit: Int, predicate: DatePredicate, code: UInt16) throws {
        let store = try store(type: "stepCount", rows: [Row(0, 10, 5)])
        let error = healthError {
            _ = try store.samples(
                subject: "anna", type: try QuantityType.named(type), filter: SampleFilter(date: predicate),
                limit: limit, unit: HealthUnit(parsing: unit))
        }
        #expect(error?.code.rawValue == code)
    }

    @Test("source filters match by name or bundle identifier, UUID filters by UUID")
    func sourceAndUUIDFilters() throws {
        let store = HealthStore()
        _ = try store.insert(
            makeBatch(type: "stepCount", rows: [Row(0, 10, 1, phone), Row(5, 15, 2, watch), Row(20, 30, 3, fitApp)]))
        let byBundle = try store.samples(
            subject: "anna", type: "stepCount", filter: SampleFilter(sources: ["com.apple.health.watch"]))
        #expect(byBundle.values == [2])
        #expect(byBundle.sources == [watch])
        let byName = try store.samples(
            subject: "anna", type: "stepCount", filter: SampleFilter(sources: ["FitApp", "Anna's iPhone"]))
        #expect(byName.values == [1, 3])
        #expect(byName.sourceIndices.map { byName.sources[Int($0)] } == [phone, fitApp])
        let all = try store.samples(subject: "anna", type: "stepCount")
        let wanted = Set([all.uuids[0], all.uuids[2]])
        let byUUID = try store.samples(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: wanted))
        #expect(byUUID.values == [1, 3])
        let none = try store.samples(subject: "anna", type: "stepCount", filter: SampleFilter(sources: []))
        #expect(none.count == 0)
    }

    @Test("value bounds: inclusive and exclusive edges, converted from the bounds' unit to the canonical one")
    func valueBounds() throws {
        // Distances stored in metres; bounds given in km, mi and m.
        let store = try store(
            type: "distanceWalkingRunning", unit: "km",
            rows: [Row(0, 10, 0.5), Row(10, 20, 1), Row(20, 30, 1.5), Row(30, 40, 2), Row(40, 50, 3)])
        func values(_ bounds: ValueBounds) throws -> [Double] {
            try store.samples(subject: "anna", type: "distanceWalkingRunning", filter: SampleFilter(values: bounds))
                .values
        }
        #expect(try values(ValueBounds(lower: 1000)) == [1000, 1500, 2000, 3000])
        #expect(try values(ValueBounds(lower: 1000, lowerInclusive: false)) == [1500, 2000, 3000])
        #expect(try values(ValueBounds(lower: 1, upper: 2, unit: "km")) == [1000, 1500, 2000])
        #expect(
            try values(ValueBounds(lower: 1, upper: 2, lowerInclusive: false, upperInclusive: false, unit: "km")) == [
                1500
            ])
        #expect(try values(ValueBounds(upper: 1, unit: "mi")) == [500, 1000, 1500])
        #expect(try values(ValueBounds(lower: 1500, upper: 1500)) == [1500], "== q is both bounds at q")
        #expect(try values(ValueBounds(lower: 5, unit: "km")) == [])
        // Combined with a date bound and through statistics and collections.
        let dated = SampleFilter(date: DatePredicate(end: sec(0) + 35), values: ValueBounds(lower: 1, unit: "km"))
        #expect(
            try store.samples(subject: "anna", type: "distanceWalkingRunning", filter: dated).values == [
                1000, 1500, 2000,
            ])
        let sum = try store.statistics(
            subject: "anna", type: "distanceWalkingRunning",
            filter: SampleFilter(values: ValueBounds(upper: 1.5, unit: "km")),
            options: .cumulativeSum, unit: "km")
        #expect(close(sum.figures.sum, 3))
        let buckets = try store.collection(
            subject: "anna", type: "distanceWalkingRunning",
            filter: SampleFilter(values: ValueBounds(lower: 2, unit: "km")),
            options: .cumulativeSum, anchor: 0, interval: CalendarInterval(1, .day), timeZone: "UTC")
        #expect(buckets.map(\.figures.sum) == [5000])
    }

    @Test("random value bounds agree with a full scan", arguments: [11, 12, 13] as [UInt64])
    func randomValueBounds(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let rows = (0..<300).map { i in
            Row(Timestamp(i) * 1000, Timestamp(i) * 1000, Double(Int.random(in: 40..<200, using: &generator)))
        }
        let store = try store(type: "heartRate", rows: rows)
        for _ in 0..<100 {
            let lower = Bool.random(using: &generator) ? Double(Int.random(in: 30..<210, using: &generator)) : nil
            let upper =
                Bool.random(using: &generator) ? Double(Int.random(in: Int(lower ?? 30)..<220, using: &generator)) : nil
            let bounds = ValueBounds(
                lower: lower, upper: upper, lowerInclusive: Bool.random(using: &generator),
                upperInclusive: Bool.random(using: &generator))
            // Bounds in count/s select the rows whose canonical (count/min) value lies within them once converted.
            let perSecond = ValueBounds(
                lower: lower.map { $0 / 60 }, upper: upper.map { $0 / 60 }, lowerInclusive: bounds.lowerInclusive,
                upperInclusive: bounds.upperInclusive, unit: "count/s")
            let expected = rows.map(\.value).filter(bounds.matches)
            #expect(
                try store.samples(subject: "anna", type: "heartRate", filter: SampleFilter(values: bounds)).values
                    == expected, "\(bounds)")
            let converted = try store.samples(
                subject: "anna", type: "heartRate", filter: SampleFilter(values: perSecond)
            ).values
            let canonical = try perSecond.canonical(for: .named("heartRate"))
            #expect(canonical.unit == "")
            #expect(converted == rows.map(\.value).filter(canonical.matches), "\(perSecond)")
        }
    }

    @Test(
        "value bounds that cannot match or name a wrong unit are errors",
        arguments: [
            (ValueBounds(lower: 2, upper: 1), ErrorCode.invalidPredicate),
            (ValueBounds(lower: .infinity), .invalidPredicate),
            (ValueBounds(lower: 1, unit: "kg"), .incompatibleUnit),
            (ValueBounds(lower: 1, unit: "furlongs"), .invalidUnit),
        ])
    func valueBoundErrors(bounds: ValueBounds, code: ErrorCode) throws {
        let store = try store(type: "stepCount", rows: [Row(0, 10, 5)])
        let error = healthError {
            _ = try store.samples(subject: "anna", type: "stepCount", filter: SampleFilter(values: bounds))
        }
        #expect(error?.code == code)
    }

    @Test("an unknown subject or type without samples gives an empty result")
    func emptyResults() throws {
        let store = try store(type: "stepCount", rows: [Row(0, 10, 5)])
        #expect(try store.samples(subject: "nobody", type: "stepCount").count == 0)
        #expect(try store.samples(subject: "anna", type: "heartRate").count == 0)
        #expect(try store.samples(subject: "anna", type: "HKQuantityTypeIdentifierStepCount").count == 1)
    }

    @Test("chunks cover the result and keep the source dictionary")
    func chunks() throws {
        let rows = (0..<10).map { (i: Int) -> Row in
            let t = sec(Double(i))
            return Row(t, t + sec(1), Double(i), i % 2 == 0 ? phone : watch)
        }
        let result = try store(type: "stepCount", rows: rows).samples(subject: "anna", type: "stepCount")
        let chunks = stride(from: 0, to: result.count, by: 4).map { result.chunk($0..<($0 + 4)) }
        #expect(chunks.map(\.count) == [4, 4, 2])
        #expect(chunks.flatMap(\.values) == result.values)
        #expect(chunks.flatMap(\.uuids) == result.uuids)
        #expect(chunks.allSatisfy { $0.sources == result.sources })
    }
}
