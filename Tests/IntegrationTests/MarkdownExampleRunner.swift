import Foundation
import Testing
import TestSupport

// Markdown examples, run: the rules for anyone writing a command and its output into a document.
//
// Every Markdown file of the package (hidden directories and .build left out) whose fenced blocks show `$ ` lines
// is run by MarkdownExampleTests, each file on its own, block after block in the order of the file, against real
// hkd servers: each command with `/bin/sh -c` (for at most a minute) in the file's working directory (a new
// temporary one), `PATH` starting with the built hkq and hkd, `TZ=UTC`, `COLUMNS=80`, no `HKQ_`/`HKD_` variable
// but `HKQ_SERVER`, the server the file calls 127.0.0.1:7420, and the admin token found the way README says
// (`./hkd-data/admin.token`). What a command prints (standard output and standard error, interleaved) must be
// the lines the file shows after it, up to the next `$ ` line or the block's end (trailing blank lines left out);
// a command may go on over lines ending in a backslash. A block without a `$ ` line is shown text, not run.
// A fence may be indented (inside a list item).
//
// Comments of the form `<!-- readme-test: … -->` on the lines just before a block (blank lines between allowed)
// say what the file's prose takes for granted:
//   fresh                      stop the servers, go on in a new working directory (with the files written so far)
//   server ADDRESS [http=PORT] [ARGS]
//                              start hkd with ARGS (data directory ./hkd-data unless --data-dir) for ADDRESS,
//                              and its HTTP API for PORT; the real ports are written into the commands for the
//                              ones the file names, and back into the output
//   file NAME                  the block is the content of file NAME: write it to the working directory
//   fixture NAME PATH          copy PATH (from the package root) to NAME in the working directory
//   not run: REASON            the block cannot run in a test (counted and listed by the test; a file may have
//                              only as many as MarkdownExampleTests.notRunAllowed grants it, 0 unless listed)
// A directive the parser does not know fails the test, naming its line. The servers of one file are started
// only by its `server` directives and live until its next `fresh` or its end: start one per file where possible.
//
// The one masking rule, for every file: before comparing, both the file's lines and the actual output pass
// through `masks` below, which replace what differs from run to run (server-info's uptime, memory and open
// connections, which may still count a connection just closed; elapsed times; certificate fingerprints; the
// timestamps that start hkd's log lines) with a placeholder; servers' real ports are written back as the ports
// the file names. Everything else, UUIDs, anchors and the instants hkq prints included, must match exactly.

/// Runs one Markdown file's examples (see the comment above) and reports where the output differs.
struct MarkdownExampleRunner {
    /// A step whose output differs from the file's.
    struct Mismatch: CustomStringConvertible {
        var file: String
        var step: MarkdownExamples.Step
        var actual: [String]

        var description: String {
            let expected = MarkdownExampleRunner.masked(step.expected)
            let printed = MarkdownExampleRunner.masked(actual)
            var diff = [
                "\(file):\(step.line): `\(step.command)` printed other lines than \(file) shows (- \(file), + run):"
            ]
            // The lines the file has and the run lacks (-), the run has and the file lacks (+), the rest shared.
            var removed = Set<Int>()
            var inserted = Set<Int>()
            for change in printed.difference(from: expected) {
                switch change {
                case .remove(let offset, _, _): removed.insert(offset)
                case .insert(let offset, _, _): inserted.insert(offset)
                }
            }
            var (old, new) = (0, 0)
            while old < expected.count || new < printed.count {
                if old < expected.count, removed.contains(old) {
                    diff.append("- \(expected[old])")
                    old += 1
                } else if new < printed.count, inserted.contains(new) {
                    diff.append("+ \(printed[new])")
                    new += 1
                } else {
                    diff.append("  \(expected[old])")
                    (old, new) = (old + 1, new + 1)
                }
            }
            return diff.joined(separator: "\n")
        }
    }

    /// What a run found.
    struct Report {
        var mismatches: [Mismatch] = []
        /// The blocks marked `not run`, by line, with their reasons.
        var notRun: [(line: Int, reason: String)] = []
        /// How many commands ran.
        var commands = 0
    }

    /// The masking rule: each pattern's matches become its placeholder, in the file's lines and the output alike.
    static let masks: [(pattern: String, placeholder: String)] = [
        (#"^(UPTIME|MEMORY|CONNECTIONS)( +).*$"#, "$1$2<varies>"),
        (#" in [0-9]+(\.[0-9]+)? ?(ms|s)\b"#, " in <elapsed>"),
        (#"\b[0-9A-F]{2}(:[0-9A-F]{2}){31}\b"#, "<fingerprint>"),
        (#"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+Z( hkd\[)"#, "<timestamp>$1"),
    ]

    static func masked(_ lines: [String]) -> [String] {
        lines.map { line in
            masks.reduce(line) { text, mask in
                text.replacingOccurrences(of: mask.pattern, with: mask.placeholder, options: .regularExpression)
            }
        }
    }

    let file: String
    let examples: MarkdownExamples

    /// The servers started for the addresses the file names.
    private var servers: [TestServer] = []
    /// The ports the file names, with the servers' real ones.
    private var ports: [(shown: String, actual: Int)] = []
    /// The files written so far, by name, which a `fresh` working directory holds too.
    private var files: [String: String] = [:]
    private var directory: TestDirectory

    init(file: String, markdown: String) throws {
        self.file = file
        examples = try MarkdownExamples(markdown: markdown)
        directory = try TestDirectory(prefix: "hk-examples")
    }

    /// Runs every block in order.
    mutating func run() async throws -> Report {
        var report = Report()
        for block in examples.blocks {
            var skip = false
            for directive in block.directives {
                switch directive {
                case .fresh:
                    await stopServers()
                    directory = try TestDirectory(prefix: "hk-examples")
                    for (name, text) in files {
                        try text.write(toFile: directory.appending(name), atomically: false, encoding: .utf8)
                    }
                case .server(let address, let httpPort, let arguments):
                    try await startServer(shownAddress: address, httpPort: httpPort, arguments: arguments)
                case .file(let name):
                    files[name] = block.lines.joined(separator: "\n") + "\n"
                    try files[name]?.write(toFile: directory.appending(name), atomically: false, encoding: .utf8)
                    skip = true
                case .fixture(let name, let path):
                    try FileManager.default.copyItem(
                        atPath: TestFixtures.packageRoot.appendingPathComponent(path).path,
                        toPath: directory.appending(name))
                case .notRun(let reason):
                    report.notRun.append((block.line, reason))
                    skip = true
                }
            }
            if skip { continue }
            for step in block.steps {
                let actual = try await run(step.command)
                report.commands += 1
                if Self.masked(step.expected) != Self.masked(actual) {
                    report.mismatches.append(Mismatch(file: file, step: step, actual: actual))
                }
            }
        }
        await stopServers()
        return report
    }

    /// Runs one command in the working directory; returns its printed lines, trailing blank lines left out.
    private func run(_ command: String) async throws -> [String] {
        var environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("HKQ_") && !$0.key.hasPrefix("HKD_")
        }
        let binaries = try TestServer.binary("hkq").deletingLastPathComponent().path
        environment["PATH"] = binaries + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["TZ"] = "UTC"
        environment["COLUMNS"] = "80"
        environment["LC_ALL"] = "C.UTF-8"
        if let main = ports.first(where: { $0.shown == "7420" }) {
            environment["HKQ_SERVER"] = "127.0.0.1:\(main.actual)"
        }
        var text = command
        for (shown, actual) in ports {
            text = text.replacingOccurrences(
                of: #"(127\.0\.0\.1|localhost):\#(shown)\b"#, with: "$1:\(actual)", options: .regularExpression)
        }
        // A command that hangs (a `watch` without `--count`, say) ends after a minute with what it printed.
        let outcome = try await runChild(
            "/usr/bin/timeout", ["60", "/bin/sh", "-c", "exec 2>&1\n" + text], environment: environment,
            currentDirectory: directory.path)
        var printed = outcome.output
        for (shown, actual) in ports {
            printed = printed.replacingOccurrences(
                of: #"(127\.0\.0\.1|localhost):\#(actual)\b"#, with: "$1:\(shown)", options: .regularExpression)
        }
        var lines = printed.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        return lines
    }

    private mutating func startServer(shownAddress: String, httpPort: String?, arguments: [String]) async throws {
        var rest = arguments
        var dataDirectory = "hkd-data"
        if let index = rest.firstIndex(of: "--data-dir"), index + 1 < rest.count {
            dataDirectory = rest[index + 1]
            rest.removeSubrange(index...index + 1)
        }
        let server = try await TestServer(dataDirectory: directory.appending(dataDirectory), arguments: rest)
        servers.append(server)
        ports.append((shownAddress.split(separator: ":").last.map(String.init) ?? shownAddress, server.port))
        if let httpPort {
            try await server.waitForLog("HTTP API on")
            let logged = try #require(
                server.logText.firstMatch(of: #/HTTP API on [0-9.]+:([0-9]+)/#).flatMap { Int($0.1) },
                "hkd did not log its HTTP API's port: \(server.logText)")
            ports.append((httpPort, logged))
        }
    }

    private mutating func stopServers() async {
        for server in servers { _ = await server.stop() }
        (servers, ports) = ([], [])
    }
}
