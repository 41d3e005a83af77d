import Foundation
import HealthClient
import HealthModel
import HealthPosix
import HealthServer
import HealthWire
import Synchronization

/// `hkbench live`: an in-process hkd on loopback; the latency from an acknowledged insert to the pushed update of
/// an anchored subscription on another connection, and the insert rate with and without live-collection
/// subscribers on other connections.
enum LiveBenchmark: BenchCommand {
    static let name = "live"
    static let abstract = "Insert-to-update latency and insert rate with 100 live-collection subscribers."
    static let options: [(flag: String, help: String)] = [
        ("--probes <n>", "Single-sample inserts timed for the latency (default 500)."),
        ("--subscribers <n>", "Live-collection subscribers, one connection each (default 100)."),
        ("--batches <n>", "Batches of 1,000 samples inserted per rate run (default 300)."),
        ("--rounds <n>", "Rate runs per case, each on fresh subjects; the median ratio is reported (default 3)."),
    ]

    static func run(_ options: ParsedOptions) throws {
        let probes = try options.integer("--probes", default: 500, in: 1...100_000)
        let subscribers = try options.integer("--subscribers", default: 100, in: 1...1000)
        let batches = try options.integer("--batches", default: 300, in: 1...100_000)
        let rounds = try options.integer("--rounds", default: 3, in: 1...100)
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hkbench-live")
        defer { try? FileSystem.removeTree(directory) }
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = directory
        configuration.fsync = .interval
        configuration.snapshotIntervalSeconds = 0
        configuration.maxConnections = subscribers + 16
        // Clients without tokens: the benchmark measures updates, not authentication.
        configuration.auth = .off
        let server = try HealthServer.start(configuration)
        defer { server.stop() }
        print("hkbench live: in-process hkd on 127.0.0.1:\(server.port), fsync interval\n")
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<Void, any Error>
            do {
                try await measure(
                    port: server.port, probes: probes, subscribers: subscribers, batches: batches, rounds: rounds)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }!.get()
    }

    static func client(_ port: Int, _ name: String) -> HealthClient {
        HealthClient(ClientConfiguration(host: "127.0.0.1", port: port, clientName: name, requestTimeout: .seconds(60)))
    }

    static func batch(subject: String, start: Timestamp, count: Int) -> SampleBatch {
        var batch = SampleBatch(
            batchID: HealthClient.makeBatchID(), subject: subject, typeIdentifier: "stepCount", unit: "count")
        let source = SourceInfo(name: "bench", bundleIdentifier: "org.example.bench")
        for i in 0..<count {
            let s = start + Timestamp(i) * Micros.minute
            batch.append(start: s, end: s + 30 * Micros.second, value: Double(i % 50), source: source)
        }
        return batch
    }

    static func measure(port: Int, probes: Int, subscribers: Int, batches: Int, rounds: Int) async throws {
        // Latency: the subscriber's reader thread stamps the arrival of each update.
        let writer = client(port, "writer")
        let watcher = client(port, "watcher")
        defer {
            writer.close()
            watcher.close()
        }
        let arrivals = Mutex<[ContinuousClock.Instant]>([])
        let connection = try await watcher.connection()
        _ = try await connection.subscribe(
            .anchored(ChangesQuery(subject: "latency", type: "stepCount", anchor: 0)),
            handlers: .init(update: { _ in arrivals.withLock { $0.append(.now) } }, end: { _ in }))
        var latencies: [Double] = []
        let start: Timestamp = 1_704_067_200_000_000
        for probe in 0..<probes {
            let expected = probe + 2  // the initial update, then one per insert
            _ = try await writer.insert(
                batch(subject: "latency", start: start + Timestamp(probe) * Micros.minute, count: 1))
            let acknowledged = ContinuousClock.now
            while arrivals.withLock({ $0.count }) < expected { try await Task.sleep(for: .microseconds(20)) }
            let arrived = arrivals.withLock { $0[expected - 1] }
            let gap = (arrived - acknowledged).components
            latencies.append(Double(gap.seconds) * 1e3 + Double(gap.attoseconds) * 1e-15)
        }
        latencies.sort()
        let median = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
        print(
            String(
                format: "latency ack → update   median %.3f ms, p99 %.3f ms (%d probes; negative: update first)",
                median, p99, probes))

        // Each round on fresh subjects, so every run inserts into series of the same size; rounds alternate the
        // runs without and with subscribers, so load from outside drifts into both alike.
        var sameRatios: [Double] = []
        var spreadRatios: [Double] = []
        for round in 0..<rounds {
            let without = try await insertRate(port: port, subject: "rate-\(round)-0", batches: batches)
            let query = CollectionQuery(
                subject: "rate-\(round)-1", type: "stepCount", options: .cumulativeSum, anchor: start,
                interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin")
            let same = try await subscribed(port: port, (0..<subscribers).map { _ in query }, name: "live")
            let with = try await insertRate(port: port, subject: query.subject, batches: batches)
            let sameLag = try await same.caughtUp(port: port)
            same.close()
            sameRatios.append(with / without)
            print(
                String(
                    format:
                        "round %d, one subject:  %.0f samples/s without, %.0f with %d live collections (%.0f %%), %@",
                    round + 1, without, with, subscribers, with / without * 100, same.summary(caughtUp: sameLag)))

            // The common case: each subscriber watches its own subject; inserts spread over those subjects.
            // Compared with the same spread over other subjects without subscribers.
            let spreadWithout = try await insertRate(
                port: port, subject: "spread-\(round)-", batches: batches, subjects: subscribers)
            let own = try await subscribed(
                port: port,
                (0..<subscribers).map { index in
                    var mine = query
                    mine.subject = "own-\(round)-\(index)"
                    return mine
                }, name: "own")
            let spreadWith = try await insertRate(
                port: port, subject: "own-\(round)-", batches: batches, subjects: subscribers)
            let ownLag = try await own.caughtUp(port: port)
            own.close()
            spreadRatios.append(spreadWith / spreadWithout)
            print(
                String(
                    format:
                        "round %d, %d subjects: %.0f samples/s without, %.0f with %d live collections (%.0f %%), %@",
                    round + 1, subscribers, spreadWithout, spreadWith, subscribers, spreadWith / spreadWithout * 100,
                    own.summary(caughtUp: ownLag)))
        }
        print(
            String(
                format: "median insert rate with %d live collections: %.0f %% (one subject), %.0f %% (%d subjects)",
                subscribers, medianOf(sameRatios) * 100, medianOf(spreadRatios) * 100, subscribers))
    }

    static func medianOf(_ values: [Double]) -> Double {
        values.sorted()[values.count / 2]
    }

    /// One connection per query, each subscribed to its query as a live collection.
    static func subscribed(port: Int, _ queries: [CollectionQuery], name: String) async throws -> LiveSubscribers {
        let subscribers = LiveSubscribers(queries)
        for (index, query) in queries.enumerated() {
            let live = client(port, "\(name)-\(index)")
            subscribers.clients.append(live)
            let table = subscribers.tables[index]
            _ = try await live.connection().subscribe(
                .collection(query),
                handlers: .init(update: { table.apply($0.content) }, end: { _ in }))
        }
        return subscribers
    }

    /// Samples per second acknowledged by two writers inserting `batches` batches of 1,000 in time order.
    /// With `subjects` > 0 batch b goes to subject `"\(subject)\(b % subjects)"`.
    static func insertRate(port: Int, subject: String, batches: Int, subjects: Int = 0) async throws -> Double {
        let writers = [client(port, "rate-a"), client(port, "rate-b")]
        defer { for writer in writers { writer.close() } }
        let start: Timestamp = 1_704_067_200_000_000
        let began = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (w, writer) in writers.enumerated() {
                group.addTask {
                    for b in stride(from: w, to: batches, by: writers.count) {
                        let target = subjects > 0 ? "\(subject)\(b % subjects)" : subject
                        _ = try await writer.insert(
                            batch(subject: target, start: start + Timestamp(b) * 1000 * Micros.minute, count: 1000))
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - began
        return Double(batches * 1000)
            / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
}
