import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkbench w1`: the W1 ingest workload of docs/PEERS.md through HealthClient over loopback.
enum W1Benchmark: BenchCommand {
    static let name = "w1"
    static let abstract = "W1 ingest: both W1 series through one client connection in acknowledged 10,000-row batches."
    static let options: [(flag: String, help: String)] = [
        ("--server <host:port>", "Use this running hkd instead of one started in-process on a free port."),
        ("--in-flight <n>", "Batches sent and not yet acknowledged in the pipelined run (default 8)."),
        ("--mode <m>", "pipelined, sequential or both (default both)."),
        ("--fsync <mode>", "The in-process server's WAL policy: always (default), interval or never."),
        (
            "--transport <t>",
            "plaintext (default), tls, or both: each mode in plaintext and over TLS (--tls auto, pinned), and the ratio."
        ),
        (
            "--rounds <n>",
            "Runs of each mode and transport, alternating which transport goes first; medians (default 1)."
        ),
        ("--json <file>", "Also write the figures as JSON (for Tools/peers/run_peers.py)."),
        (
            "--uuids <u>",
            "derived (default: from the batch id) or random: each row a random UUID of its own, kept as sent, as "
                + "agents syncing HealthKit's objects send them."
        ),
    ]

    /// Goals (BENCHMARKS.md): acknowledged ingest rate, and resident memory per stored sample.
    static let rateGoal = 1_000_000.0
    static let memoryGoal = 48.0

    /// One run's figures.
    struct Figures: Codable, Sendable {
        var mode: String
        /// `plaintext` or `tls`.
        var transport: String
        var inFlight: Int
        var samples: Int
        var batches: Int
        var seconds: Double
        var samplesPerSecond: Double
        /// Growth of the server's resident memory over the run, per stored sample (for an in-process server, the
        /// whole process's: client included, and memory freed by an earlier run reused).
        var residentBytesPerSample: Double
        /// The store's own accounting of its columns, per sample (in-process server only).
        var storeBytesPerSample: Double?
        var acknowledgement: String
        var server: String
    }

    static func run(_ options: ParsedOptions) throws {
        let address = options.string("--server")
        let inFlight = try options.integer("--in-flight", default: 8, in: 1...64)
        let durability = try AckDurability.named(options.string("--fsync"), external: address != nil)
        let modes: [(name: String, inFlight: Int)]
        switch options.string("--mode") ?? "both" {
        case "both": modes = [("pipelined", inFlight), ("sequential", 1)]
        case "pipelined": modes = [("pipelined", inFlight)]
        case "sequential": modes = [("sequential", 1)]
        case let other: throw UsageError(message: "--mode must be pipelined, sequential or both, not '\(other)'")
        }
        print(
            "hkbench w1: \(W1Dataset.rowCount) rows × \(W1Dataset.Series.allCases.count) series, batches of \(W1Dataset.batchRows) rows,"
        )
        let transports: [Bool]
        switch options.string("--transport") ?? "plaintext" {
        case "plaintext": transports = [false]
        case "tls": transports = [true]
        case "both": transports = [false, true]
        case let other: throw UsageError(message: "--transport must be plaintext, tls or both, not '\(other)'")
        }
        print("one connection. Acknowledgement: \(durability.label).\n")
        let rounds = try options.integer("--rounds", default: 1, in: 1...20)
        let uuids: Bool
        switch options.string("--uuids") ?? "derived" {
        case "derived": uuids = false
        case "random": uuids = true
        case let other: throw UsageError(message: "--uuids must be derived or random, not '\(other)'")
        }
        var all: [Figures] = []
        for mode in modes {
            var rates: [Bool: [Double]] = [:]
            for round in 0..<rounds {
                // Alternate the order: a later run in the process reuses memory an earlier one freed.
                for tls in round % 2 == 0 ? transports : transports.reversed() {
                    let figures = try measure(
                        mode: mode.name, inFlight: mode.inFlight, address: address, durability: durability, tls: tls,
                        uuids: uuids)
                    all.append(figures)
                    rates[tls, default: []].append(figures.samplesPerSecond)
                    print(line(figures))
                }
            }
            if let plain = rates[false].map(median), let tls = rates[true].map(median) {
                print(
                    String(
                        format:
                            "%@: medians of %d: plaintext %.0f, TLS %.0f samples/s: TLS at %.0f %% (goal ≥ 70 %%: %@)",
                        mode.name, rounds, plain, tls, 100 * tls / plain, tls >= 0.7 * plain ? "met" : "MISSED"))
            }
        }
        if let best = all.map(\.samplesPerSecond).max() {
            print(
                String(
                    format: "\ngoal: ≥ %.0f samples/s acknowledged: %.0f (%@)", rateGoal, best,
                    best >= rateGoal ? "met" : "MISSED"))
        }
        if let first = all.first {
            // The first run is the one on a fresh server; an in-process figure also counts the client's heap.
            let whose = address == nil ? "whole process, client included" : "hkd alone"
            let memory = first.residentBytesPerSample
            print(
                String(
                    format: "goal: ≤ %.0f resident bytes per stored sample: %.1f (%@; %@)", memoryGoal, memory,
                    whose, memory <= memoryGoal ? "met" : "MISSED"))
        }
        if let path = options.string("--json") { try JSONOutput.write(all, to: path) }
    }

    /// One run on a fresh in-process server (or the external one, under a subject of its own).
    static func measure(
        mode: String, inFlight: Int, address: String?, durability: AckDurability, tls: Bool = false,
        uuids: Bool = false
    ) throws -> Figures {
        let server = try BenchServer.start(address: address, fsync: durability.policy, tls: tls)
        defer { server.stop() }
        let subject = "w1-\(mode)-\(UInt32.random(in: 0...UInt32.max))"
        let batches = W1Ingest.batches(subject: subject, uuids: uuids)
        let rows = batches.reduce(0) { $0 + $1.count }
        let client = server.client()
        defer { client.close() }
        let clock = ContinuousClock()
        let (elapsed, inserted, before, after) = try AsyncBridge.wait {
            try await client.connect()
            let before = try await client.serverInfo()
            var inserted: UInt64 = 0
            let elapsed = try await clock.measure {
                inserted = try await W1Ingest.send(batches, through: client, inFlight: inFlight)
            }
            return (elapsed, inserted, before, try await client.serverInfo())
        }
        guard inserted == UInt64(rows) else { throw W1Error.shortAck(expected: rows, acknowledged: inserted) }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let store = server.local?.store.info()
        return Figures(
            mode: mode, transport: tls ? "tls" : "plaintext", inFlight: inFlight, samples: rows, batches: batches.count,
            seconds: seconds,
            samplesPerSecond: Double(rows) / seconds,
            residentBytesPerSample: (Double(after.residentBytes) - Double(before.residentBytes)) / Double(rows),
            storeBytesPerSample: store.map { Double($0.approximateBytes) / Double(rows) },
            acknowledgement: durability.label, server: server.description)
    }

    /// The median of `values` (not empty).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    static func line(_ f: Figures) -> String {
        let store = f.storeBytesPerSample.map { String(format: ", store columns %.1f B/sample", $0) } ?? ""
        return String(
            format:
                "%@ %@ (%d in flight): %d samples in %.2f s = %.0f samples/s acknowledged; server RSS +%.1f B/sample%@",
            f.mode, f.transport, f.inFlight, f.samples, f.seconds, f.samplesPerSecond, f.residentBytesPerSample, store)
    }
}

/// The acknowledgements did not account for every row sent.
enum W1Error: Error, CustomStringConvertible {
    case shortAck(expected: Int, acknowledged: UInt64)

    var description: String {
        switch self {
        case .shortAck(let expected, let acknowledged): "sent \(expected) rows but \(acknowledged) were acknowledged"
        }
    }
}

/// Writes figures as pretty-printed JSON for scripts.
enum JSONOutput {
    static func write(_ value: some Encodable, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(value).write(to: URL(fileURLWithPath: path))
    }
}
