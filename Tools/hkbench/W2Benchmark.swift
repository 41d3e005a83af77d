import Dispatch
import Foundation
import HealthClient
import HealthEngine
import HealthModel
import HealthServer
import HealthWire
import Synchronization

/// `hkbench w2`: W2 of docs/PEERS.md, daily step sums over the five years of W1 in America/New_York.
///
/// Loads W1's `stepCount` into a ``HealthStore`` in-process, times the collection query (median of several
/// runs), checks the answer (bucket count, DST days' lengths and sums against the raw rows, nothing lost to
/// pro-rating), then the same with a second source that repeats every other day's samples (the merged query
/// must give the same sums), and again once the first source's samples of ten minutes every other day are deleted
/// (the second counts alone there: the same sums again). With `--server` it also times the query end to end
/// through an in-process hkd and the client library.
enum W2Benchmark: BenchCommand {
    static let name = "w2"
    static let abstract = "Daily step sums over 5 years of per-minute samples in America/New_York (W2)."
    static let options: [(flag: String, help: String)] = [
        ("--repeat <n>", "Timed runs of each query; the median counts (default 15)."),
        ("--server <0|1>", "Also time the query through an in-process hkd and the client (default 0)."),
        ("--json <file>", "Also write the figures as JSON (for Tools/peers/run_peers.py)."),
    ]

    static let zone = "America/New_York"
    /// 2020-01-01T00:00 in New York: a local midnight, so buckets are local days.
    static let anchor: Timestamp = 1_577_854_800 * Micros.second
    static let expectedBuckets = 1_828
    static let serverGoal = 0.010
    static let mergedGoal = 2.0
    /// The second source: an iPhone counting the same steps on even-numbered days.
    static let phone = SourceInfo(name: "W2 iPhone", bundleIdentifier: "com.example.w2.phone", device: "iPhone15,2")

    static func run(_ options: ParsedOptions) throws {
        let repeats = try options.integer("--repeat", default: 15, in: 1...1000)
        let throughServer = try options.integer("--server", default: 0, in: 0...1) == 1
        let dataset = W1Dataset()
        let values = dataset.values(.stepCount)
        let store = HealthStore()
        for batch in dataset.batches(.stepCount) { _ = try store.insert(batch) }
        print(
            "hkbench w2: \(W1Dataset.rowCount) per-minute stepCount rows, daily sums in \(zone), median of \(repeats).\n"
        )

        var single: [Statistics] = []
        let singleTime = try median(of: repeats) { single = try query(store) }
        try check(single, values: values, label: "single source")

        for batch in phoneBatches(values: values, subject: dataset.subject) { _ = try store.insert(batch) }
        var merged: [Statistics] = []
        let mergedTime = try median(of: repeats) { merged = try query(store) }
        try check(merged, values: values, label: "merged")
        var bySource: [Statistics] = []
        let bySourceTime = try median(of: max(1, repeats / 3)) {
            bySource = try query(store, options: [.cumulativeSum, .separateBySource])
        }
        let phoneTotal = bySource.flatMap(\.bySource).filter { $0.source == phone }.compactMap(\.figures.sum).reduce(
            0, +)
        let phoneRaw = phoneRows().map { values[$0] }.reduce(0, +)
        guard abs(phoneTotal - phoneRaw) <= 1e-6 * max(1, phoneRaw) else {
            throw HealthError(
                .internalError, "by-source: the iPhone's sums add up to \(phoneTotal), its rows to \(phoneRaw)")
        }

        // The watch off for ten minutes at noon on every even day: the phone counts alone there, so each group of
        // blocks holds a lower source partly outside the higher one's cover.
        let gapDays = Array(stride(from: 0, to: W1Dataset.rowCount / 1440, by: 2))
        for day in gapDays {
            let from = W1Dataset.firstStart + Int64(day * 1440 + 720) * Micros.minute
            let filter = SampleFilter(
                date: DatePredicate(start: from, end: from + 10 * Micros.minute), sources: [W1Dataset.source.name])
            _ = try store.delete(subject: dataset.subject, type: "stepCount", filter: filter)
        }
        var gaps: [Statistics] = []
        let gapsTime = try median(of: repeats) { gaps = try query(store) }
        try check(gaps, values: values, label: "merged with the watch's gaps")

        var endToEnd: Double?
        if throughServer { endToEnd = try timeThroughServer(dataset: dataset, repeats: repeats) }

        print("| query | rows | buckets | median |")
        print("|---|---:|---:|---:|")
        let rows = W1Dataset.rowCount
        let phoneCount = phoneRows().count
        print(line("single source, in-process", rows, single.count, singleTime))
        print(line("two sources merged (§8), in-process", rows + phoneCount, merged.count, mergedTime))
        print(line("two sources, merged + separateBySource", rows + phoneCount, bySource.count, bySourceTime))
        print(
            line(
                "two sources merged, the watch off 10 min every even day", rows + phoneCount - gapDays.count * 10,
                gaps.count,
                gapsTime))
        if let endToEnd { print(line("single source, hkd + client (loopback)", rows, single.count, endToEnd)) }
        let ratio = mergedTime / singleTime
        print(
            String(
                format: "\ngoal: ≤ %.0f ms in-process: %.2f ms (%@)", serverGoal * 1e3, singleTime * 1e3,
                singleTime <= serverGoal ? "met" : "MISSED"))
        print(
            String(
                format: "goal: merged within %.0f× of single source: %.1f× (%@)", mergedGoal, ratio,
                ratio <= mergedGoal ? "met" : "MISSED"))
        print(
            "checks: \(expectedBuckets) buckets; spring-forward days 1,380 rows, fall-back days 1,500; sums equal the raw rows; merged = single"
        )
        if let path = options.string("--json") {
            try JSONOutput.write(
                Figures(
                    buckets: single.count, singleSeconds: singleTime, mergedSeconds: mergedTime,
                    bySourceSeconds: bySourceTime, mergedWithGapsSeconds: gapsTime, endToEndSeconds: endToEnd),
                to: path)
        }
    }

    /// What `--json` writes: medians in seconds (`endToEndSeconds` only with `--server 1`).
    struct Figures: Encodable {
        var buckets: Int
        var singleSeconds: Double
        var mergedSeconds: Double
        var bySourceSeconds: Double
        var mergedWithGapsSeconds: Double
        var endToEndSeconds: Double?
    }

    static func query(_ store: HealthStore, options: StatisticsOptions = .cumulativeSum) throws -> [Statistics] {
        try store.collection(
            subject: W1Dataset().subject, type: "stepCount", options: options, anchor: anchor,
            interval: CalendarInterval(1, .day), timeZone: zone)
    }

    /// Row numbers the iPhone repeats: every row of every even-numbered UTC day (half of them).
    static func phoneRows() -> [Int] {
        (0..<W1Dataset.rowCount).filter { ($0 / 1440) % 2 == 0 }
    }

    static func phoneBatches(values: [Double], subject: String) -> [SampleBatch] {
        let rows = phoneRows()
        return stride(from: 0, to: rows.count, by: W1Dataset.batchRows).enumerated().map { number, first in
            let chunk = rows[first..<min(first + W1Dataset.batchRows, rows.count)]
            let starts = chunk.map { W1Dataset.firstStart + Int64($0) * Micros.minute }
            return SampleBatch(
                batchID: UInt64(1_000_000 + number), subject: subject, typeIdentifier: "stepCount", unit: "count",
                sources: [phone], starts: starts, ends: starts.map { $0 + Micros.minute },
                values: chunk.map { values[$0] }, sourceIndices: Array(repeating: 0, count: chunk.count))
        }
    }

    /// Checks the bucket count, every DST day's length and row count, and each day's sum against the raw rows
    /// (the per-minute rows never straddle a local midnight, so a day's sum is the sum of the rows in it).
    static func check(_ buckets: [Statistics], values: [Double], label: String) throws {
        func fail(_ message: String) -> HealthError { HealthError(.internalError, "\(label): \(message)") }
        guard buckets.count == expectedBuckets else {
            throw fail("\(buckets.count) buckets, expected \(expectedBuckets)")
        }
        var spring = 0
        var fall = 0
        for bucket in buckets {
            let first = max(0, Int((bucket.start - W1Dataset.firstStart) / Micros.minute))
            let last = min(W1Dataset.rowCount, Int((bucket.end - W1Dataset.firstStart) / Micros.minute))
            let rows = last - first
            let hours = (bucket.end - bucket.start) / Micros.hour
            if hours == 23 {
                spring += 1
                guard rows == 1_380 else { throw fail("spring-forward day at \(bucket.start) holds \(rows) rows") }
            } else if hours == 25 {
                fall += 1
                guard rows == 1_500 else { throw fail("fall-back day at \(bucket.start) holds \(rows) rows") }
            }
            let raw = values[first..<last].reduce(0, +)
            guard let sum = bucket.figures.sum, abs(sum - raw) <= 1e-9 * max(1, raw) else {
                throw fail("day at \(bucket.start): sum \(String(describing: bucket.figures.sum)), rows give \(raw)")
            }
        }
        // 2020–2024: five springs and five falls, all inside the data.
        guard spring == 5, fall == 5 else {
            throw fail("\(spring) spring-forward and \(fall) fall-back days, expected 5 and 5")
        }
    }

    /// Median seconds of `repeats` runs, after one untimed warm-up run.
    static func median(of repeats: Int, _ work: () throws -> Void) rethrows -> Double {
        try work()
        var times: [Double] = []
        for _ in 0..<repeats { times.append(try Stopwatch.best(of: 1, work)) }
        return times.sorted()[times.count / 2]
    }

    static func line(_ label: String, _ rows: Int, _ buckets: Int, _ seconds: Double) -> String {
        String(format: "| %@ | %d | %d | %.2f ms |", label, rows, buckets, seconds * 1e3)
    }

    /// Starts hkd in-process on port 0 (temporary data directory), loads W1's stepCount into its store, and
    /// times the collection query through the client library over loopback.
    static func timeThroughServer(dataset: W1Dataset, repeats: Int) throws -> Double {
        var configuration = ServerConfiguration()
        configuration.auth = .off
        configuration.port = 0
        configuration.dataDirectory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("hkbench-w2-\(UUID().uuidString)").path
        let server = try HealthServer.start(configuration)
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: configuration.dataDirectory)
        }
        for batch in dataset.batches(.stepCount) { _ = try server.store.insert(batch) }
        let query = CollectionQuery(
            subject: dataset.subject, type: "stepCount", options: .cumulativeSum, anchor: anchor,
            interval: CalendarInterval(1, .day), timeZone: zone)
        let port = server.port
        let outcome = Mutex<Result<Double, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let client = HealthClient(ClientConfiguration(host: "127.0.0.1", port: port, clientName: "hkbench w2"))
            defer { client.close() }
            do {
                _ = try await client.connect()
                var times: [Double] = []
                let clock = ContinuousClock()
                for run in 0...repeats {
                    var buckets = 0
                    let elapsed = try await clock.measure { buckets = try await client.collection(query).buckets.count }
                    guard buckets == expectedBuckets else {
                        throw HealthError(.internalError, "hkd answered \(buckets) buckets")
                    }
                    if run > 0 {
                        times.append(
                            Double(elapsed.components.attoseconds) * 1e-18 + Double(elapsed.components.seconds))
                    }
                }
                outcome.withLock { $0 = .success(times.sorted()[times.count / 2]) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
