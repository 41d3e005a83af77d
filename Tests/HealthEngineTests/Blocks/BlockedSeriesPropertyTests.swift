import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// The engine on sealed blocks against the engine on plain rows: one store seals blocks of a few rows, so every
/// query crosses many blocks and their edges; the other seals blocks larger than the data, so every row stays in
/// the plain columns of the head (the layout a series had before blocks). Both get the same random batches (lengths,
/// overlapping sources, late rows, deletions), and every answer must be the same, figure for figure.
@Suite("Blocked series against plain rows")
struct BlockedSeriesPropertyTests {
    static let start: Timestamp = 1_710_000_000_000_000  // 2024-03-09, the day before New York's spring forward
    static let sources = [watch, phone, fitApp]

    /// A batch of `count` rows of `type` around `around`: sorted or shuffled, from one source or several.
    static func batch(
        type: String, count: Int, around: Timestamp, sources sourceCount: Int, using random: inout SplitMix64
    ) -> SampleBatch {
        let cumulative = type == "stepCount"
        var rows: [Row] = []
        var t = around
        for _ in 0..<count {
            t += Timestamp(Int.random(in: 0...600, using: &random)) * 1_000_000
            // Heart rate: mostly point readings (chained by the time-weighted mean), some with a duration.
            let duration: Timestamp =
                cumulative || Int.random(in: 0..<8, using: &random) == 0
                ? Timestamp(Int.random(in: 0...900, using: &random)) * 1_000_000 : 0
            let value =
                cumulative
                ? Double(Int.random(in: 0...200, using: &random)) : 50 + Double.random(in: 0..<90, using: &random)
            rows.append(Row(t, t + duration, value, sources[Int.random(in: 0..<sourceCount, using: &random)]))
        }
        if Bool.random(using: &random) { rows.shuffle(using: &random) }
        return makeBatch(type: type, rows: rows)
    }

    /// Both stores after the same `steps` random changes to `type`; the even seeds write from one source (so
    /// statistics read whole blocks by their summaries), the odd ones from up to three.
    static func stores(type: String, seed: UInt64, steps: Int) throws -> (blocked: HealthStore, plain: HealthStore) {
        var random = SplitMix64(seed: seed)
        let sourceCount = seed % 2 == 0 ? 1 : 3
        let blocked = HealthStore(blockRows: Int.random(in: 3...17, using: &random))
        let plain = HealthStore(blockRows: SealedBlock.maxRows / 2)
        var latest = start
        for _ in 0..<steps {
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                // A deletion of a random stretch of time.
                let from = start + Timestamp(Int.random(in: 0...3 * 86_400, using: &random)) * 1_000_000
                let filter = SampleFilter(date: DatePredicate(start: from, end: from + 3_600_000_000))
                #expect(
                    try blocked.delete(subject: "anna", type: try QuantityType.named(type), filter: filter)
                        == plain.delete(subject: "anna", type: try QuantityType.named(type), filter: filter))
            case 1:
                // A deletion by UUID of a stored sample.
                let stored = try plain.samples(subject: "anna", type: try QuantityType.named(type))
                guard let uuid = stored.uuids.randomElement(using: &random) else { continue }
                let filter = SampleFilter(uuids: [uuid])
                #expect(try blocked.delete(subject: "anna", type: try QuantityType.named(type), filter: filter) == 1)
                #expect(try plain.delete(subject: "anna", type: try QuantityType.named(type), filter: filter) == 1)
            default:
                // Mostly live data after the latest rows; some late batches land among sealed ones.
                let late = Int.random(in: 0..<4, using: &random) == 0
                let around =
                    late ? start + Timestamp(Int.random(in: 0...3 * 86_400, using: &random)) * 1_000_000 : latest
                let batch = Self.batch(
                    type: type, count: Int.random(in: 1...120, using: &random), around: around,
                    sources: Int.random(in: 1...sourceCount, using: &random), using: &random)
                #expect(try blocked.insert(batch) == plain.insert(batch))
                latest = max(latest, batch.starts.max() ?? latest)
                // Sent again: nothing is added (the retry finds each row in its block).
                if Int.random(in: 0..<8, using: &random) == 0 {
                    #expect(try blocked.insert(batch) == plain.insert(batch))
                }
            }
        }
        return (blocked, plain)
    }

    @Test("samples, statistics, merged sums, DST collections and changes agree", arguments: [1, 2, 3, 4, 5, 6])
    func agree(seed: UInt64) throws {
        for type in ["stepCount", "heartRate"] {
            let (blocked, plain) = try Self.stores(
                type: type, seed: TestSeed.value(seed) &* 2 &+ seed % 2 &+ UInt64(type.count) * 16, steps: 60)
            var random = SplitMix64(seed: seed &* 7919)
            // The blocked store holds many sealed blocks, the plain one none.
            let blockCounts = try [blocked, plain].map { store in
                store.read(try QuantityType.named(type)) { $0.series["anna"]?.rows.blocks.count ?? 0 }
            }
            #expect(blockCounts[0] > 10 && blockCounts[1] == 0, "\(blockCounts)")
            #expect(
                try blocked.samples(subject: "anna", type: try QuantityType.named(type))
                    == plain.samples(subject: "anna", type: try QuantityType.named(type)))
            for sort in [SampleSort.startDescending, .endAscending, .endDescending] {
                #expect(
                    try blocked.samples(subject: "anna", type: try QuantityType.named(type), sort: sort, limit: 17)
                        == plain.samples(subject: "anna", type: try QuantityType.named(type), sort: sort, limit: 17))
            }
            let options: StatisticsOptions =
                type == "stepCount"
                ? [.cumulativeSum, .duration, .mostRecent, .separateBySource]
                : [.discreteAverage, .discreteMin, .discreteMax, .mostRecent, .separateBySource]
            // Figures whole blocks give by their summaries (the sums are of whole numbers, so exact in any order).
            let summarised: StatisticsOptions = type == "stepCount" ? .cumulativeSum : [.discreteMin, .discreteMax]
            // The time-weighted average counts whole blocks by their partial areas: equal up to rounding.
            let averaged: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax]
            for _ in 0..<12 {
                let from = Self.start + Timestamp(Int.random(in: -3_600...4 * 86_400, using: &random)) * 1_000_000
                let to = from + Timestamp(Int.random(in: 1...2 * 86_400, using: &random)) * 1_000_000
                let date = DatePredicate(
                    start: from, end: to, strictStartDate: Bool.random(using: &random),
                    strictEndDate: Bool.random(using: &random))
                let filter = SampleFilter(date: date, sources: Bool.random(using: &random) ? nil : [phone.name])
                #expect(
                    try blocked.samples(subject: "anna", type: try QuantityType.named(type), filter: filter)
                        == plain.samples(subject: "anna", type: try QuantityType.named(type), filter: filter))
                if type == "heartRate" {
                    let read = outcome {
                        try blocked.statistics(
                            subject: "anna", type: try QuantityType.named(type), filter: filter, options: averaged)
                    }
                    let expected = outcome {
                        try plain.statistics(
                            subject: "anna", type: try QuantityType.named(type), filter: filter, options: averaged)
                    }
                    #expect(Self.agreeUpToRounding(read, expected), "\(read) \(expected)")
                }
                for options in [options, summarised, options.subtracting(.separateBySource)] {
                    #expect(
                        outcome {
                            try blocked.statistics(
                                subject: "anna", type: try QuantityType.named(type), filter: filter, options: options)
                        }
                            == outcome {
                                try plain.statistics(
                                    subject: "anna", type: try QuantityType.named(type), filter: filter,
                                    options: options)
                            })
                }
            }
            for zone in ["America/New_York", "Europe/Berlin", "UTC"] {
                for interval in [CalendarInterval(1, .hour), CalendarInterval(1, .day)] {
                    // Read block by block, a bucket's bulk sum may be added in two parts: equal up to rounding.
                    let read = try blocked.collection(
                        subject: "anna", type: try QuantityType.named(type), options: summarised, anchor: Self.start,
                        interval: interval,
                        timeZone: zone)
                    let expected = try plain.collection(
                        subject: "anna", type: try QuantityType.named(type), options: summarised, anchor: Self.start,
                        interval: interval,
                        timeZone: zone)
                    #expect(Self.agreeUpToRounding(read, expected), "\(zone) \(interval)")
                    if type == "stepCount" {
                        // Sums by source alone are read block by block beside the merge; with more figures asked,
                        // from the decoded selection: each source's sums the same either way.
                        let chunked = try blocked.collection(
                            subject: "anna", type: try QuantityType.named(type),
                            options: [.cumulativeSum, .separateBySource],
                            anchor: Self.start, interval: interval, timeZone: zone)
                        let decoded = try blocked.collection(
                            subject: "anna", type: try QuantityType.named(type), options: options, anchor: Self.start,
                            interval: interval,
                            timeZone: zone)
                        let mergedAlone = chunked.map {
                            var bucket = $0
                            bucket.bySource = []
                            return bucket
                        }
                        #expect(Self.agreeUpToRounding(mergedAlone, read), "\(zone) \(interval)")
                        // Each source's sums, figure by figure (read by lanes, a bucket's sum may be added in
                        // another order): equal up to rounding.
                        let sumsAlone = decoded.map {
                            var bucket = $0
                            bucket.figures = StatisticsFigures(sum: $0.figures.sum)
                            bucket.bySource = $0.bySource.map {
                                SourceStatistics(source: $0.source, figures: StatisticsFigures(sum: $0.figures.sum))
                            }
                            return bucket
                        }
                        #expect(Self.agreeUpToRounding(chunked, sumsAlone), "\(zone) \(interval)")
                    }
                    #expect(
                        try blocked.collection(
                            subject: "anna", type: try QuantityType.named(type), options: options, anchor: Self.start,
                            interval: interval,
                            timeZone: zone)
                            == plain.collection(
                                subject: "anna", type: try QuantityType.named(type), options: options,
                                anchor: Self.start,
                                interval: interval, timeZone: zone))
                }
            }
            let last = try plain.lastAnchor(type: QuantityType.named(type))
            for anchor in [0, last / 3, last / 2, last.saturatingSubtract(5)] {
                #expect(
                    try blocked.changes(subject: "anna", type: try QuantityType.named(type), anchor: anchor)
                        == plain.changes(subject: "anna", type: try QuantityType.named(type), anchor: anchor))
                // Paged with a limit, the same changes in the same order.
                var paged: [UUID] = []
                var cursor = anchor
                while true {
                    let page = try blocked.changes(
                        subject: "anna", type: try QuantityType.named(type), anchor: cursor, limit: 7)
                    paged += page.added.uuids + page.deleted.map(\.uuid)
                    cursor = page.anchor
                    if !page.hasMore { break }
                }
                let whole = try plain.changes(subject: "anna", type: try QuantityType.named(type), anchor: anchor)
                #expect(
                    paged.map(\.uuidString).sorted()
                        == (whole.added.uuids + whole.deleted.map(\.uuid)).map(\.uuidString).sorted())
                #expect(
                    try blocked.changedSpans(subject: "anna", type: try QuantityType.named(type), after: anchor)
                        == plain.changedSpans(subject: "anna", type: try QuantityType.named(type), after: anchor))
            }
        }
    }
}

extension BlockedSeriesPropertyTests {
    /// The same buckets with the same figures, the merged and each source's sums equal to 1e-12 relative (or
    /// 1e-9 absolute).
    static func agreeUpToRounding(_ a: [Statistics], _ b: [Statistics]) -> Bool {
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) {
            guard x.start == y.start, x.end == y.end, agreeUpToRounding(x.figures, y.figures),
                x.bySource.map(\.source) == y.bySource.map(\.source),
                zip(x.bySource, y.bySource).allSatisfy({ agreeUpToRounding($0.figures, $1.figures) })
            else { return false }
        }
        return true
    }

    /// The same figures, sums equal to 1e-12 relative (or 1e-9 absolute).
    static func agreeUpToRounding(_ fx: StatisticsFigures, _ fy: StatisticsFigures) -> Bool {
        var (fx, fy) = (fx, fy)
        guard (fx.sum == nil) == (fy.sum == nil) else { return false }
        if let sx = fx.sum, let sy = fy.sum, abs(sx - sy) > max(1e-9, 1e-12 * abs(sy)) { return false }
        (fx.sum, fy.sum) = (nil, nil)
        return fx == fy
    }
}

extension BlockedSeriesPropertyTests {
    /// The same statistics (or the same error), averages equal to 1e-12 relative.
    fileprivate static func agreeUpToRounding(_ a: Outcome<Statistics>, _ b: Outcome<Statistics>) -> Bool {
        guard case .value(let x) = a, case .value(let y) = b else { return a == b }
        var (fx, fy) = (x.figures, y.figures)
        guard (fx.average == nil) == (fy.average == nil) else { return false }
        if let ax = fx.average, let ay = fy.average, abs(ax - ay) > 1e-12 * max(1, abs(ay)) { return false }
        (fx.average, fy.average) = (nil, nil)
        return x.start == y.start && x.end == y.end && fx == fy && x.bySource == y.bySource
    }
}

/// What `body` returns, or the numeric code of the ``HealthError`` it throws (the largest code for any other error).
private func outcome<T: Equatable>(_ body: () throws -> T) -> Outcome<T> {
    do {
        return .value(try body())
    } catch {
        return .code((error as? HealthError)?.code.rawValue ?? .max)
    }
}

/// A query's answer or its error code, comparable.
private enum Outcome<T: Equatable>: Equatable {
    case value(T)
    case code(UInt16)
}

extension UInt64 {
    /// `self - other`, or 0 below it.
    fileprivate func saturatingSubtract(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
}
