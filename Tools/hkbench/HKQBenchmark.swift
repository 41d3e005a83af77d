import Foundation
import HealthClient
import HealthModel

/// `hkbench hkq`: whole `hkq` processes answering the two queries of hkq's start-up goals (most recent, W2's
/// daily sums as CSV), W2 as JSON (its goal: within 10 % of CSV) and `hkq types`, with `/bin/true` beside them
/// for the machine's own cost of a process.
///
/// What makes these figures comparable on shared virtual machines:
/// - Every binary is copied into a fresh directory first. A file that has sat in the page cache for a while has
///   had pages reclaimed and split (a `kdamond` reclaims cold pages here); the same binary then starts up to a
///   millisecond and a half slower than a fresh copy of it, enough to turn an A/B around.
/// - Runs are interleaved one by one (each command, each binary in turns, then again), because the machine's speed
///   changes by half for seconds at a time: medians of separate batches compare minutes, not builds.
/// - Each run is one `posix_spawn` and a blocking `wait4`: wall time from spawn to exit, and the child's CPU
///   time (user and system) from `wait4`.
enum HKQBenchmark: BenchCommand {
    static let name = "hkq"
    static let abstract = "Whole hkq processes: most recent, W2 through hkq (CSV, JSON), hkq types; A/B with --compare."
    static let options: [(flag: String, help: String)] = [
        ("--runs <n>", "Runs of each command and binary, interleaved; the median counts (default 200)."),
        ("--compare <path>", "Another hkq binary to time beside this build's, run for run."),
        ("--server <host:port>", "An hkd holding W1's data (default: one in this process, loaded first)."),
        ("--subject <name>", "The subject holding W1's data on --server (default: w1-subject)."),
    ]

    /// The goals for the whole hkq process (BENCHMARKS.md).
    static let mostRecentGoal = 3e-3
    static let w2Goal = 6e-3
    /// W2 as JSON takes at most this much longer than as CSV.
    static let jsonOverCSVGoal = 0.10

    static func run(_ options: ParsedOptions) throws {
        let runs = try options.integer("--runs", default: 200, in: 5...10_000)
        let server = try BenchServer.start(address: options.string("--server"), fsync: .never)
        defer { server.stop() }
        let subject = options.string("--subject") ?? W1Dataset().subject
        if server.local != nil {
            let client = server.client()
            defer { client.close() }
            let rows = try AsyncBridge.wait {
                try await W1Ingest.send(W1Ingest.batches(subject: subject), through: client, inFlight: 8)
            }
            print("loaded W1's \(rows) rows for \(subject) into an hkd in this process (\(server.description))")
            // Sealing and the first snapshot follow the load: timing hkq meanwhile would share the cores with them.
            let settled = try waitUntilIdle()
            print("the server was idle \(String(format: "%.1f", settled)) s after the load\n")
        }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hkbench-hkq-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var binaries = [("this build", try freshCopy(ChildProcess.sibling("hkq"), into: directory, as: "hkq"))]
        if let other = options.string("--compare") {
            binaries.append(("--compare", try freshCopy(other, into: directory, as: "hkq-compare")))
        }

        let target = ["--server", "\(server.host):\(server.port)", "--subject", subject]
        let w2 =
            target + [
                "collection", "stepCount", "--interval", "1d", "--tz", W2Benchmark.zone, "--anchor", "2020-01-01",
            ]
        let commands: [(label: String, arguments: [String], goal: Double?)] = [
            (
                "most recent", target + ["stats", "heartRate", "--options", "recent", "--format", "json"],
                mostRecentGoal
            ),
            ("W2 through hkq", w2 + ["--format", "csv"], w2Goal),
            ("W2 through hkq, JSON", w2 + ["--format", "json"], nil),
            ("hkq types", ["types"], nil),
        ]
        for (_, path) in binaries {
            try check(path, commands[0].arguments, commands[1].arguments, commands[2].arguments)
        }

        // Every (command, binary) pair, then /bin/true, once per round.
        var timings = [[ChildProcess.Timing]](repeating: [], count: commands.count * binaries.count + 1)
        for round in 0..<runs {
            for (c, command) in commands.enumerated() {
                // The binaries take turns going first: the first run after another command is slower, whichever
                // binary it is.
                let order = round % 2 == 0 ? Array(binaries.indices) : binaries.indices.reversed()
                for b in order {
                    timings[c * binaries.count + b].append(try ChildProcess.time(binaries[b].1, command.arguments))
                }
            }
            timings[timings.count - 1].append(try ChildProcess.time("/bin/true", []))
        }

        print("\(runs) runs of each, interleaved; fresh copies of the binaries in \(directory)\n")
        print("| command | binary | wall median | wall p25 | wall min | CPU median |")
        print("|---|---|---:|---:|---:|---:|")
        for (c, command) in commands.enumerated() {
            for (b, binary) in binaries.enumerated() {
                print(row(command.label, binary.0, timings[c * binaries.count + b]))
            }
        }
        print(row("/bin/true", "", timings[timings.count - 1]))
        print()
        for (c, command) in commands.enumerated() {
            guard let goal = command.goal else { continue }
            let median = Self.median(timings[c * binaries.count].map(\.seconds))
            print(
                "goal: \(command.label) ≤ \(milliseconds(goal)): \(milliseconds(median)) "
                    + "(\(median <= goal ? "met" : "MISSED"); the machine's /bin/true "
                    + "\(milliseconds(Self.median(timings[timings.count - 1].map(\.seconds)))))")
        }
        let csv = Self.median(timings[1 * binaries.count].map(\.seconds))
        let json = Self.median(timings[2 * binaries.count].map(\.seconds))
        print(
            "goal: W2 through hkq, JSON ≤ CSV + \(Int(jsonOverCSVGoal * 100)) %: \(milliseconds(json)) against "
                + "\(milliseconds(csv)), \(String(format: "%+.1f", (json / csv - 1) * 100)) % "
                + "(\(json <= csv * (1 + jsonOverCSVGoal) ? "met" : "MISSED"))")
    }

    /// Waits until this process (the in-process server's threads) uses under 2% of a core over a tenth of a
    /// second; returns the seconds waited. Throws after a minute.
    static func waitUntilIdle() throws -> Double {
        let clock = ContinuousClock()
        let started = clock.now
        while started.duration(to: clock.now) < .seconds(60) {
            let before = ChildProcess.ownCPUSeconds()
            usleep(100_000)
            if ChildProcess.ownCPUSeconds() - before < 0.002 {
                let waited = started.duration(to: clock.now)
                return Double(waited.components.seconds) + Double(waited.components.attoseconds) * 1e-18
            }
        }
        throw HealthError(.internalError, "the in-process server was still busy a minute after the load")
    }

    /// A copy of `path` in `directory`, executable, written with one `write` of the whole file: the page cache
    /// then holds it in large folios, as after `cp`. (Foundation's `copyItem` sends the file 4 KiB at a time; a
    /// binary copied so faults in more pages at every start and takes more CPU, as does a file that has aged in
    /// the page cache.)
    static func freshCopy(_ path: String, into directory: String, as name: String) throws -> String {
        let copy = directory + "/" + name
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let descriptor = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw HealthError(.internalError, "cannot create \(copy): errno \(errno)") }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw HealthError(.internalError, "cannot write \(copy): errno \(errno)") }
            offset += written
        }
        return copy
    }

    /// Runs the queries once and checks their answers (W2 as CSV and as JSON), so a broken binary or an empty
    /// server is not timed.
    static func check(_ hkq: String, _ mostRecent: [String], _ w2: [String], _ w2JSON: [String]) throws {
        let recent = try ChildProcess.run(hkq, mostRecent)
        guard recent.status == 0, recent.output.contains("\"mostRecent\":") else {
            throw HealthError(.internalError, "\(hkq) \(mostRecent.joined(separator: " ")): \(recent.output)")
        }
        let collection = try ChildProcess.run(hkq, w2)
        let lines = collection.output.split(separator: "\n")
        guard collection.status == 0, lines.first == "start,end,sum,unit", lines.count == 1829 else {
            throw HealthError(
                .internalError, "\(hkq) collection: status \(collection.status), \(lines.count) lines, not 1,829")
        }
        // `[`, one bucket a line, `]`.
        let json = try ChildProcess.run(hkq, w2JSON)
        let jsonLines = json.output.split(separator: "\n")
        guard json.status == 0, jsonLines.first == "[", jsonLines.last == "]", jsonLines.count == 1830 else {
            throw HealthError(
                .internalError, "\(hkq) collection --format json: status \(json.status), \(jsonLines.count) lines")
        }
    }

    static func row(_ label: String, _ binary: String, _ timings: [ChildProcess.Timing]) -> String {
        let wall = timings.map(\.seconds).sorted()
        return "| \(label) | \(binary) | \(milliseconds(median(wall))) | \(milliseconds(wall[wall.count / 4])) | "
            + "\(milliseconds(wall[0])) | \(milliseconds(median(timings.map(\.cpuSeconds)))) |"
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1e3) }
}
