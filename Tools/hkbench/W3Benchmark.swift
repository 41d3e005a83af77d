import Foundation
import HealthClient
import HealthEngine
import HealthModel

/// `hkbench w3`: the W3 range statistics of docs/PEERS.md, in the engine and through the client.
enum W3Benchmark: BenchCommand {
    static let name = "w3"
    static let abstract = "W3 range statistics: 92-day heartRate min/max/avg, stepCount sum, most recent heartRate."
    static let options: [(flag: String, help: String)] = [
        ("--server <host:port>", "Query this running hkd (loaded first through the client); no server-side timing."),
        ("--runs <n>", "Timed runs of each query, after 10 untimed ones (default 2000)."),
        ("--json <file>", "Also write the figures as JSON (for Tools/peers/run_peers.py)."),
    ]

    /// Goals (BENCHMARKS.md), server-side.
    static let statisticsGoal = 0.5e-3
    static let mostRecentGoal = 50e-6

    /// 2022-07-01T00:00Z to 2022-10-01T00:00Z: 92 days in the middle of the dataset.
    static let windowStart: Timestamp = 1_656_633_600 * Micros.second
    static let windowEnd: Timestamp = windowStart + 92 * 86_400 * Micros.second
    /// 2024-06-15T12:34:56Z: "most recent heartRate before this instant".
    static let instant: Timestamp = 1_718_454_896 * Micros.second

    /// One W3 query: a statistics query on the W3 subject.
    struct Query: Sendable {
        var name: String
        var type: W1Dataset.Series
        var options: StatisticsOptions
        var filter: SampleFilter
        var goal: Double
    }

    static let queries: [Query] = [
        Query(
            name: "heartRate 92-day min/max/avg", type: .heartRate,
            options: [.discreteMin, .discreteMax, .discreteAverage],
            filter: SampleFilter(date: DatePredicate(start: windowStart, end: windowEnd)), goal: statisticsGoal),
        Query(
            name: "stepCount 92-day sum", type: .stepCount, options: .cumulativeSum,
            filter: SampleFilter(date: DatePredicate(start: windowStart, end: windowEnd)), goal: statisticsGoal),
        Query(
            name: "heartRate most recent before instant", type: .heartRate, options: .mostRecent,
            filter: SampleFilter(date: DatePredicate(end: instant)), goal: mostRecentGoal),
    ]

    /// One query's timings.
    struct Figures: Codable, Sendable {
        var query: String
        var runs: Int
        var serverMedian: Double?
        var serverP99: Double?
        var clientMedian: Double
        var clientP99: Double
        var goal: Double
        var answer: String
    }

    static let subject = "w3-subject"

    static func run(_ options: ParsedOptions) throws {
        let runs = try options.integer("--runs", default: 2000, in: 1...1_000_000)
        let server = try BenchServer.start(address: options.string("--server"))
        defer { server.stop() }
        let client = server.client()
        defer { client.close() }
        let loadSeconds = try load(server, client)
        print(
            String(
                format: "hkbench w3: loaded 2 × %d per-minute samples (5 years) in %.2f s into the %@;",
                W1Dataset.rowCount, loadSeconds, server.description))
        print("median / p99 of \(runs) runs each, after 10 untimed runs.\n")
        var all: [Figures] = []
        for query in queries {
            var figures = try measure(query, runs: runs, store: server.local?.store, client: client)
            figures.answer = try answer(query, client: client)
            all.append(figures)
        }
        print(table(all))
        print("")
        for f in all {
            guard let median = f.serverMedian else { continue }
            print(
                "goal: \(f.query) ≤ \(Latencies.format(f.goal)) server-side (median): \(Latencies.format(median)) "
                    + "(\(median <= f.goal ? "met" : "MISSED"))")
        }
        if let path = options.string("--json") { try JSONOutput.write(all, to: path) }
    }

    /// Loads both series: straight into the store of an in-process server, through the client otherwise.
    static func load(_ server: BenchServer, _ client: HealthClient) throws -> Double {
        let batches = W1Ingest.batches(subject: subject)
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            if let store = server.local?.store {
                for batch in batches { _ = try store.insert(batch) }
            } else {
                _ = try AsyncBridge.wait { try await W1Ingest.send(batches, through: client, inFlight: 8) }
            }
        }
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    /// Times one query in the engine (in-process server only) and end to end through the client.
    static func measure(_ query: Query, runs: Int, store: HealthStore?, client: HealthClient) throws -> Figures {
        let serverSide = try store.map { store in
            try Latencies.measure(runs: runs) {
                _ = try store.statistics(
                    subject: subject, type: QuantityType.named(query.type.rawValue), filter: query.filter,
                    options: query.options)
            }
        }
        let endToEnd = try AsyncBridge.wait {
            for _ in 0..<10 { _ = try await statistics(query, client) }
            var latencies = Latencies()
            let clock = ContinuousClock()
            for _ in 0..<runs {
                let started = clock.now
                _ = try await statistics(query, client)
                latencies.add(clock.now - started)
            }
            return latencies
        }
        return Figures(
            query: query.name, runs: runs, serverMedian: serverSide?.median, serverP99: serverSide?.p99,
            clientMedian: endToEnd.median, clientP99: endToEnd.p99, goal: query.goal, answer: "")
    }

    static func statistics(_ query: Query, _ client: HealthClient) async throws -> Statistics {
        guard
            let result = try await client.statistics(
                query.type.rawValue, subject: subject, options: query.options, filter: query.filter)
        else { throw HealthError(.noData, "W3 \(query.name): no data") }
        return result.statistics
    }

    /// The query's answer, printed so runs (and peers) can be compared for sameness.
    static func answer(_ query: Query, client: HealthClient) throws -> String {
        let figures = try AsyncBridge.wait { try await statistics(query, client) }.figures
        var parts: [String] = []
        if let v = figures.minimum { parts.append("min \(v)") }
        if let v = figures.maximum { parts.append("max \(v)") }
        if let v = figures.average { parts.append(String(format: "avg %.4f", v)) }
        if let v = figures.sum { parts.append(String(format: "sum %.0f", v)) }
        if let recent = figures.mostRecent {
            parts.append("\(recent.value) at \(Date(timeIntervalSince1970: Double(recent.start) / 1e6))")
        }
        return parts.joined(separator: ", ")
    }

    static func table(_ all: [Figures]) -> String {
        var lines = [
            "| query | server-side median | server-side p99 | end to end median | end to end p99 | answer |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for f in all {
            let server = [f.serverMedian, f.serverP99].map { $0.map(Latencies.format) ?? "—" }
            lines.append(
                "| \(f.query) | \(server[0]) | \(server[1]) | \(Latencies.format(f.clientMedian)) | "
                    + "\(Latencies.format(f.clientP99)) | \(f.answer) |")
        }
        return lines.joined(separator: "\n")
    }
}
