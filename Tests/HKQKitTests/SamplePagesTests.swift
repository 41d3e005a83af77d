import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HKQKit

/// `hkq samples` reads one type's listing in pages: the pages together are the one query's answer, in its order.
@Suite("Sample listings in pages")
struct SamplePagesTests {
    /// A store of samples answering sample queries as hkd does: the date predicate's matches in start order
    /// (ties in stored order; newest first reverses it), at most `limit`.
    struct FakeStore {
        let samples: [Sample]

        func query(_ filter: SampleFilter, limit: Int, descending: Bool) -> [Sample] {
            var matches = samples.filter { filter.date.matches(start: $0.start, end: $0.end) }
            if descending { matches.reverse() }
            return limit > 0 ? Array(matches.prefix(limit)) : matches
        }
    }

    @Test("pages concatenate to the whole listing, with ties at page bounds and every kind of date predicate")
    func pagesMatchOneQuery() async throws {
        var random = SplitMix64(seed: TestSeed.value(34))
        var samples: [Sample] = []
        var start: Timestamp = 1_000_000
        for _ in 0..<600 {
            // Runs of equal starts, some longer than a page.
            if Int.random(in: 0..<4, using: &random) == 0 { start += Timestamp.random(in: 1...50, using: &random) }
            samples.append(
                Sample(
                    subject: "anna", type: "stepCount", start: start,
                    end: start + Timestamp.random(in: 0...200, using: &random), value: 1, unit: "count",
                    source: SourceInfo(name: "iPhone")))
        }
        let store = FakeStore(samples: samples)
        let (first, last) = (samples.first!.start, samples.last!.start)
        let middle = (first + last) / 2
        let predicates = [
            DatePredicate(), DatePredicate(start: middle), DatePredicate(start: middle, strictStartDate: true),
            DatePredicate(end: middle), DatePredicate(end: middle, strictEndDate: true),
            DatePredicate(start: first + 40, end: last - 40, strictStartDate: true, strictEndDate: true),
        ]
        for date in predicates {
            for order in [SampleOrder.start, .startDescending] {
                for limit in [0, 7, 130] {
                    let filter = SampleFilter(date: date)
                    var pages = SamplePages(filter: filter, order: order, limit: limit)
                    pages.pageRows = 9
                    var listed: [UUID] = []
                    var queries = 0
                    try await pages.forEach(
                        query: { filter, rows in
                            queries += 1
                            return store.query(filter, limit: rows, descending: order == .startDescending)
                        }
                    ) { page in
                        #expect(!page.isEmpty && (page.count <= 9 || !pages.isPaged))
                        listed += page.map(\.uuid)
                    }
                    let whole = store.query(filter, limit: limit, descending: order == .startDescending)
                    #expect(listed == whole.map(\.uuid), "\(date) \(order) limit \(limit)")
                    if pages.isPaged { #expect(queries >= whole.count / 9) }
                }
            }
        }
    }

    @Test("newest first with a strict end is one query; sorted by end too")
    func unpagedListings() {
        let strictEnd = SampleFilter(date: DatePredicate(end: 100, strictEndDate: true))
        #expect(!SamplePages(filter: strictEnd, order: .startDescending, limit: 0).isPaged)
        #expect(SamplePages(filter: strictEnd, order: .start, limit: 0).isPaged)
        #expect(!SamplePages(filter: .all, order: .end, limit: 0).isPaged)
        #expect(!SamplePages(filter: .all, order: .endDescending, limit: 0).isPaged)
    }
}
