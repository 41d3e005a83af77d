import Foundation
import HealthClient
import HealthModel
import HealthServer
import HealthWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `hkbench capacity`: how many samples one hkd holds on this machine with W2 and W3 still answering (the goal:
/// 2 billion rows). Starts the real `hkd` (built beside hkbench) with `--memory-limit`, loads `--subjects` copies of
/// W1's dataset (5,259,600 samples each: per-minute steps and heart rate over five years) through the client,
/// pipelined, printing the server's resident memory, its block bytes in memory and on disk, and the data
/// directory's size as it goes; then times W2's daily sums and W3's queries on the first subject (its blocks
/// long moved to disk) and the last, checking the answers.
enum CapacityBenchmark: BenchCommand {
    static let name = "capacity"
    static let abstract = "Billions of samples in one hkd with --memory-limit; W2 and W3 on cold and hot subjects."
    static let options: [(flag: String, help: String)] = [
        ("--subjects <n>", "Copies of the W1 dataset, one subject each (default 381: 2.004 billion samples)."),
        ("--memory-limit <bytes>", "hkd's --memory-limit (default 256M; with --export, for its second restart)."),
        ("--data-dir <dir>", "hkd's data directory (default a temporary one, removed afterwards)."),
        ("--in-flight <n>", "Batches sent and not yet acknowledged (default 8)."),
        ("--report-every <n>", "Print progress after this many subjects (default 20)."),
        (
            "--export <file>",
            "Instead: import this Apple Health export (zip or export.xml) into a fresh hkd, restart it, and print "
                + "resident and on-disk bytes per sample beside the file's bytes per record, with the store's "
                + "memory by structure, after a restart with default settings and one with --memory-limit."
        ),
    ]

    static func run(_ options: ParsedOptions) throws {
        let limit = options.string("--memory-limit") ?? "256M"
        if let export = options.string("--export") { return try ExportCapacity.run(export: export, memoryLimit: limit) }
        let subjects = try options.integer("--subjects", default: 381, in: 1...100_000)
        let limitBytes = try ServerConfiguration.parseByteCount(limit, origin: "--memory-limit")
        let inFlight = try options.integer("--in-flight", default: 8, in: 1...64)
        let every = try options.integer("--report-every", default: 20, in: 1...100_000)
        let keep = options.string("--data-dir") != nil
        let directory =
            options.string("--data-dir")
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("hkbench-capacity-\(UUID())").path
        let arguments = ["--data-dir", directory, "--auth", "off", "--memory-limit", limit]
        let hkd = try RunningHKD(path: try ChildProcess.sibling("hkd"), arguments: arguments)
        defer {
            hkd.stop()
            if !keep { try? FileManager.default.removeItem(atPath: directory) }
        }
        let perSubject = 2 * W1Dataset.rowCount
        print(
            "hkbench capacity: \(subjects) subjects × \(perSubject) samples = \(subjects * perSubject) samples into "
                + "hkd --memory-limit \(limit) (pid \(hkd.pid), \(directory)), \(inFlight) batches in flight\n")
        let template = W1Ingest.batches(subject: "template")
        let client = HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: hkd.port, clientName: "hkbench capacity", requestTimeout: .seconds(600),
                retry: .none))
        defer { client.close() }
        print("| subjects | samples | elapsed | rate (M/s) | hkd RSS | blocks in memory | blocks on disk | data dir |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        let clock = ContinuousClock()
        let started = clock.now
        var stored = 0
        for index in 0..<subjects {
            let batches = template.map { batch in
                var copy = batch
                copy.subject = subject(index)
                copy.batchID = HealthClient.makeBatchID()
                return copy
            }
            stored += Int(
                try AsyncBridge.wait { try await W1Ingest.send(batches, through: client, inFlight: inFlight) })
            if (index + 1) % every == 0 || index + 1 == subjects {
                try report(index + 1, stored, since: started, hkd, client, directory)
            }
        }
        guard stored == subjects * perSubject else {
            throw HealthError(.internalError, "hkd acknowledged \(stored) samples, not \(subjects * perSubject)")
        }
        // The mover runs every second: wait until the blocks in memory are within the limit again.
        let settle = clock.now
        var info = try AsyncBridge.wait { try await client.serverInfo() }
        while clock.now - settle < .seconds(120) {
            info = try AsyncBridge.wait { try await client.serverInfo() }
            if info.blockBytesInMemory <= UInt64(limitBytes) { break }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let total = info.samplesPerType.reduce(UInt64(0)) { $0 + $1.samples }
        print("\nhkd holds \(total) samples of \(info.subjects) subjects (server info).")
        try report(subjects, stored, since: started, hkd, client, directory)
        for (label, index) in [("first subject (least recently used: cold)", 0), ("last subject", subjects - 1)] {
            print("\nQueries on the \(label), \(subject(index)), end to end through the client:")
            try queries(subject(index), client)
        }
        client.close()

        // A clean stop (a snapshot of everything) and a restart: its blocks stay in the mapped snapshot files.
        let stopping = clock.now
        hkd.stop()
        print(
            "\nhkd stopped (final snapshot) in \(format(clock.now - stopping)); data directory \(mib(diskUsage(directory)))"
        )
        let restarting = clock.now
        let again = try RunningHKD(path: try ChildProcess.sibling("hkd"), arguments: arguments)
        defer { again.stop() }
        print("hkd restarted in \(format(clock.now - restarting)) (until it listens); RSS \(mib(again.residentBytes))")
        let reader = HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: again.port, clientName: "hkbench capacity", requestTimeout: .seconds(600),
                retry: .none))
        defer { reader.close() }
        let restarted = try AsyncBridge.wait { try await reader.serverInfo() }
        print(
            "after the restart: \(restarted.samplesPerType.reduce(UInt64(0)) { $0 + $1.samples }) samples, blocks "
                + "\(mib(Int(restarted.blockBytesInMemory))) in memory and \(mib(Int(restarted.blockBytesOnDisk))) on disk"
        )
        print("\nQueries on the first subject after the restart:")
        try queries(subject(0), reader)
        print("hkd RSS after them: \(mib(again.residentBytes))")
    }

    static func format(_ duration: Duration) -> String {
        String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18)
    }

    static func subject(_ index: Int) -> String { "capacity-\(index)" }

    /// One progress row.
    static func report(
        _ subjects: Int, _ samples: Int, since started: ContinuousClock.Instant, _ hkd: RunningHKD,
        _ client: HealthClient, _ directory: String
    ) throws {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let info = try AsyncBridge.wait { try await client.serverInfo() }
        print(
            String(
                format: "| %d | %d | %.0f s | %.2f | %@ | %@ | %@ | %@ |", subjects, samples, seconds,
                Double(samples) / seconds / 1e6, mib(hkd.residentBytes), mib(Int(info.blockBytesInMemory)),
                mib(Int(info.blockBytesOnDisk)), mib(diskUsage(directory))))
        fflush(nil)
    }

    static func mib(_ bytes: Int) -> String { String(format: "%.0f MiB", Double(bytes) / 1_048_576) }

    /// Bytes the files under `directory` take on disk.
    static func diskUsage(_ directory: String) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return 0 }
        var total = 0
        for case let path as String in walker {
            var status = stat()
            if stat(directory + "/" + path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG {
                total += Int(status.st_blocks) * 512
            }
        }
        return total
    }

    /// W2 (daily step sums over five years in America/New_York) and W3's three queries on `subject`, each run
    /// five times: the first run (blocks read from disk if cold and not in the page cache) and the median.
    static func queries(_ subject: String, _ client: HealthClient) throws {
        let w2 = CollectionQuery(
            subject: subject, type: "stepCount", options: .cumulativeSum, anchor: W2Benchmark.anchor,
            interval: CalendarInterval(1, .day), timeZone: W2Benchmark.zone)
        let expectedSum = W1Dataset().values(.stepCount).reduce(0, +)
        try time("W2 daily step sums, 5 years") {
            let buckets = try await client.collection(w2).buckets
            let sum = buckets.compactMap { $0.figures.sum }.reduce(0, +)
            guard buckets.count == W2Benchmark.expectedBuckets, sum == expectedSum else {
                throw HealthError(.internalError, "W2 answered \(buckets.count) buckets summing to \(sum)")
            }
            return "\(buckets.count) days, \(Int(sum)) steps"
        }
        for query in W3Benchmark.queries {
            try time("W3 " + query.name) {
                guard
                    let figures = try await client.statistics(
                        query.type.rawValue, subject: subject, options: query.options, filter: query.filter
                    )?.statistics.figures
                else { throw HealthError(.noData, "W3 \(query.name): no data") }
                return [
                    figures.minimum.map { "min \($0)" }, figures.maximum.map { "max \($0)" },
                    figures.average.map { String(format: "avg %.4f", $0) },
                    figures.sum.map { String(format: "sum %.0f", $0) }, figures.mostRecent.map { "latest \($0.value)" },
                ].compactMap { $0 }.joined(separator: ", ")
            }
        }
    }

    /// Runs `body` five times; prints the first run's time, the median and the answer.
    static func time(_ label: String, _ body: @escaping @Sendable () async throws -> String) throws {
        let clock = ContinuousClock()
        var times: [Double] = []
        var answer = ""
        for _ in 0..<5 {
            let started = clock.now
            answer = try AsyncBridge.wait { try await body() }
            let elapsed = clock.now - started
            times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        }
        let first = times[0]
        let median = times.sorted()[2]
        print(String(format: "  %@: first %.2f ms, median of 5 %.2f ms (%@)", label, first * 1e3, median * 1e3, answer))
    }
}

/// The real hkd as a child process on a free loopback port, for benchmarks of the whole server.
final class RunningHKD: Sendable {
    let pid: pid_t
    let port: Int
    private let logPath: String

    /// Starts `path` listening on 127.0.0.1:0 with `arguments`, its standard error into a temporary log, and waits
    /// until it logs the port it listens on.
    init(path: String, arguments: [String]) throws {
        logPath = FileManager.default.temporaryDirectory.appendingPathComponent("hkbench-hkd-\(UUID()).log").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([path, "--listen", "127.0.0.1:0"] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, path, &actions, nil, argv, environ)
        guard status == 0 else {
            throw HealthError(.internalError, "cannot start \(path): \(String(cString: strerror(status)))")
        }
        pid = child
        let deadline = ContinuousClock.now + .seconds(120)
        var found: Int?
        while found == nil, ContinuousClock.now < deadline {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let range = log.range(of: "listening on 127.0.0.1:") {
                found = Int(log[range.upperBound...].prefix { $0.isNumber })
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        guard let found else {
            kill(child, SIGKILL)
            throw HealthError(
                .internalError, "hkd did not start: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        }
        port = found
    }

    /// The server's resident memory now (`VmRSS`), in bytes.
    var residentBytes: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kib * 1024
    }

    /// Stops hkd with SIGTERM (it takes a final snapshot) and waits for it; removes the log. Idempotent.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        try? FileManager.default.removeItem(atPath: logPath)
    }

    private let stopped = Atomic<Bool>(false)
}
