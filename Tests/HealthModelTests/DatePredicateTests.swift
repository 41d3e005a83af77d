import Foundation
import Testing

import HealthModel

/// The date predicate table of HEALTHKIT.md §4, with every boundary: S = 100, E = 200.
@Suite struct DatePredicateTests {
    static let s: Timestamp = 100
    static let e: Timestamp = 200

    /// A sample interval and whether it matches with: no option, strictStartDate, strictEndDate, both.
    struct Row: Sendable, CustomTestStringConvertible {
        var start: Timestamp
        var end: Timestamp
        var none: Bool
        var strictStart: Bool
        var strictEnd: Bool
        var both: Bool
        var note: String
        var testDescription: String { "[\(start), \(end)] \(note)" }
    }

    static let rows: [Row] = [
        Row(start: 50, end: 99, none: false, strictStart: false, strictEnd: false, both: false, note: "ends before S"),
        Row(start: 99, end: 99, none: false, strictStart: false, strictEnd: false, both: false, note: "point before S"),
        Row(
            start: 50, end: 100, none: true, strictStart: false, strictEnd: true, both: false, note: "ends exactly at S"
        ),
        Row(
            start: 100, end: 100, none: true, strictStart: true, strictEnd: true, both: true, note: "point exactly at S"
        ),
        Row(start: 99, end: 150, none: true, strictStart: false, strictEnd: true, both: false, note: "straddles S"),
        Row(
            start: 100, end: 150, none: true, strictStart: true, strictEnd: true, both: true,
            note: "starts exactly at S"),
        Row(start: 150, end: 150, none: true, strictStart: true, strictEnd: true, both: true, note: "point inside"),
        Row(start: 120, end: 180, none: true, strictStart: true, strictEnd: true, both: true, note: "inside"),
        Row(
            start: 199, end: 199, none: true, strictStart: true, strictEnd: true, both: true,
            note: "point just before E"),
        Row(
            start: 150, end: 199, none: true, strictStart: true, strictEnd: true, both: true, note: "ends just before E"
        ),
        Row(
            start: 150, end: 200, none: true, strictStart: true, strictEnd: false, both: false,
            note: "ends exactly at E"),
        Row(start: 150, end: 250, none: true, strictStart: true, strictEnd: false, both: false, note: "straddles E"),
        Row(start: 50, end: 250, none: true, strictStart: false, strictEnd: false, both: false, note: "covers [S, E]"),
        Row(
            start: 200, end: 200, none: false, strictStart: false, strictEnd: false, both: false,
            note: "point exactly at E"),
        Row(
            start: 200, end: 250, none: false, strictStart: false, strictEnd: false, both: false,
            note: "starts exactly at E"),
        Row(start: 250, end: 300, none: false, strictStart: false, strictEnd: false, both: false, note: "after E"),
    ]

    @Test(arguments: rows)
    func tableRow(_ row: Row) {
        let expectations: [(strictStart: Bool, strictEnd: Bool, matches: Bool)] = [
            (false, false, row.none), (true, false, row.strictStart), (false, true, row.strictEnd),
            (true, true, row.both),
        ]
        for (strictStart, strictEnd, matches) in expectations {
            let predicate = DatePredicate(
                start: Self.s, end: Self.e, strictStartDate: strictStart, strictEndDate: strictEnd)
            #expect(
                predicate.matches(start: row.start, end: row.end) == matches,
                "strictStartDate: \(strictStart), strictEndDate: \(strictEnd)")
        }
    }

    /// Every option combination against the §4 formulas over a grid of intervals around both bounds.
    @Test(arguments: [false, true], [false, true])
    func formulasHoldOnAGrid(strictStart: Bool, strictEnd: Bool) {
        let predicate = DatePredicate(
            start: Self.s, end: Self.e, strictStartDate: strictStart, strictEndDate: strictEnd)
        let points: [Timestamp] = [0, 99, 100, 101, 150, 199, 200, 201, 300]
        for start in points {
            for end in points where end >= start {
                let lower = strictStart ? start >= Self.s : end >= Self.s
                let upper = strictEnd ? (end < Self.e && start < Self.e) : start < Self.e
                #expect(predicate.matches(start: start, end: end) == (lower && upper), "[\(start), \(end)]")
            }
        }
    }

    @Test func missingBoundsAreOpen() {
        #expect(DatePredicate.all.matches(start: .min, end: .max))
        #expect(DatePredicate.all.matches(start: 0, end: 0))

        let onlyStart = DatePredicate(start: 100)
        #expect(onlyStart.matches(start: 50, end: 100))
        #expect(!onlyStart.matches(start: 50, end: 99))
        #expect(onlyStart.matches(start: 1_000_000, end: .max))
        let onlyStartStrict = DatePredicate(start: 100, strictStartDate: true)
        #expect(!onlyStartStrict.matches(start: 99, end: 1000))
        #expect(onlyStartStrict.matches(start: 100, end: 1000))

        let onlyEnd = DatePredicate(end: 200)
        #expect(onlyEnd.matches(start: .min, end: 250))
        #expect(!onlyEnd.matches(start: 200, end: 200))
        let onlyEndStrict = DatePredicate(end: 200, strictEndDate: true)
        #expect(!onlyEndStrict.matches(start: 150, end: 200))
        #expect(onlyEndStrict.matches(start: 150, end: 199))
    }

    /// `[S, S)` is valid: without options it still finds samples spanning S, with strictStartDate nothing.
    @Test func emptyRangeValidatesAndMatchesOnlySpanningSamples() throws {
        let empty = DatePredicate(start: 100, end: 100)
        try empty.validate()
        #expect(!empty.matches(start: 100, end: 100))
        #expect(empty.matches(start: 50, end: 150))
        #expect(!empty.matches(start: 50, end: 99))
        let strict = DatePredicate(start: 100, end: 100, strictStartDate: true)
        for (start, end) in [(100, 100), (50, 150), (100, 150)] as [(Timestamp, Timestamp)] {
            #expect(!strict.matches(start: start, end: end))
        }
    }

    @Test func invertedRangeIsRejected() {
        #expect(throws: HealthError(.invalidPredicate, "the predicate ends (100) before it starts (200)")) {
            try DatePredicate(start: 200, end: 100).validate()
        }
    }

    @Test func sampleFilterMatchesSourcesByNameOrBundle() {
        let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.W")
        let phone = SourceInfo(name: "Phone")
        #expect(SampleFilter.all.matches(source: watch))
        let byName = SampleFilter(sources: ["Watch"])
        #expect(byName.matches(source: watch))
        #expect(!byName.matches(source: phone))
        let byBundle = SampleFilter(sources: ["com.apple.health.W"])
        #expect(byBundle.matches(source: watch))
        #expect(!byBundle.matches(source: phone))
        #expect(!SampleFilter(sources: [""]).matches(source: phone))
    }
}
