import Testing
import Foundation
import HealthModel

@testable import HKQKit

/// The argument parser and the driver: options, arguments, globals, help, exit codes.
@Suite struct ParserTests {
    @Test func defaultsWithoutEnvironment() async {
        let result = await runHKQ(["echo", "stepCount"], program: testProgram)
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(
            result.out == """
                server=127.0.0.1:7420 subject=me token=- format=table
                args=stepCount
                limit=- ascending=false order=-
                sources=

                """)
    }

    @Test(arguments: [
        ["--server", "db:9000", "--subject", "anna", "--token", "t0k", "--format", "json", "echo", "x"],
        ["echo", "x", "--server", "db:9000", "--subject", "anna", "--token", "t0k", "--format", "json"],
        ["--server=db:9000", "echo", "--subject=anna", "x", "--token=t0k", "--format=json"],
    ])
    func globalOptionsBeforeOrAfterTheCommand(arguments: [String]) async {
        let result = await runHKQ(arguments, program: testProgram)
        #expect(result.status == 0)
        #expect(result.out.hasPrefix("server=db:9000 subject=anna token=t0k format=json\nargs=x\n"))
    }

    @Test func environmentSuppliesDefaultsAndTheCommandLineWins() async {
        let environment = ["HKQ_SERVER": "10.0.0.1:7000", "HKQ_SUBJECT": "bob", "HKQ_TOKEN": "envtoken"]
        let fromEnvironment = await runHKQ(["echo", "x"], environment: environment, program: testProgram)
        #expect(fromEnvironment.out.hasPrefix("server=10.0.0.1:7000 subject=bob token=envtoken format=table\n"))
        let overridden = await runHKQ(
            ["echo", "x", "--server", "[::1]:7421", "--subject", "eve", "--token", "cli"], environment: environment,
            program: testProgram)
        #expect(overridden.out.hasPrefix("server=[::1]:7421 subject=eve token=cli format=table\n"))
    }

    @Test func commandOptionsFlagsRepeatsAndNegativeNumbers() async {
        let result = await runHKQ(
            [
                "echo", "--limit", "5", "--ascending", "--source=Watch", "--source", "Phone", "-40",
                "--sort-order=desc",
                "more",
            ], program: testProgram)
        #expect(result.status == 0)
        #expect(
            result.out.hasSuffix(
                """
                args=-40|more
                limit=5 ascending=true order=desc
                sources=Watch|Phone

                """))
    }

    @Test func doubleDashEndsOptions() async {
        let result = await runHKQ(["echo", "--", "--limit", "-h"], program: testProgram)
        #expect(result.status == 0)
        #expect(result.out.contains("args=--limit|-h\nlimit=- "))
    }

    @Test func lastValueOfARepeatedSingleOptionWins() async {
        let result = await runHKQ(
            ["echo", "x", "--limit", "1", "--limit=2", "--format", "csv", "--format", "json"], program: testProgram)
        #expect(result.out.contains("format=json"))
        #expect(result.out.contains("limit=2 "))
    }

    /// Each mistake: one `error:` line naming it, the usage, a hint; exit 64; nothing on stdout.
    @Test(arguments: [
        (["nosuch"], "unknown command 'nosuch'", "Usage: tool [<options>] <command>", "See 'tool --help'"),
        (
            ["group", "nosuch"], "unknown subcommand 'nosuch'", "Usage: tool group <subcommand>",
            "See 'tool group --help'"
        ),
        (
            ["echo", "x", "--fromat", "json"], "unknown option '--fromat'; did you mean '--format'?",
            "Usage: tool echo [--limit <n>]",
            "See 'tool echo --help'"
        ),
        (
            ["--limit", "3", "echo", "x"], "unknown option '--limit'", "Usage: tool [<options>] <command>",
            "See 'tool --help'"
        ),
        (["echo", "x", "-x"], "unknown option '-x'", "Usage: tool echo", "See 'tool echo --help'"),
        (
            ["echo", "x", "--limit"], "missing value for option '--limit <n>'", "Usage: tool echo",
            "See 'tool echo --help'"
        ),
        (
            ["echo", "x", "--limit", "--ascending"], "missing value for option '--limit <n>'", "Usage: tool echo",
            "See 'tool echo --help'"
        ),
        (
            ["echo", "x", "--ascending=yes"], "flag '--ascending' takes no value", "Usage: tool echo",
            "See 'tool echo --help'"
        ),
        (
            ["echo", "x", "--sort-order", "up"], "invalid value 'up' for '--sort-order'; expected asc or desc",
            "Usage: tool echo", "See 'tool echo --help'"
        ),
        (
            ["echo", "x", "--format", "xml"],
            "invalid value 'xml' for '--format'; expected table, json, csv, chart or ndjson",
            "Usage: tool echo", "See 'tool echo --help'"
        ),
        (
            ["echo", "x", "--limit", "ten"], "invalid value 'ten' for '--limit'; expected an integer",
            "Usage: tool echo", "See 'tool echo --help'"
        ),
        (
            ["echo"], "missing argument '<type>'",
            "Usage: tool echo [--limit <n>] [--ascending] [--source <name>] [--sort-order <order>] [<global-options>] <type> [<rest> ...]",
            "See 'tool echo --help'"
        ),
        (["fail"], "missing argument '<how>'", "Usage: tool fail [<global-options>] <how>", "See 'tool fail --help'"),
        (["fail", "a", "b"], "unexpected argument 'b'", "Usage: tool fail", "See 'tool fail --help'"),
        ([], "missing command", "Usage: tool [<options>] <command>", "See 'tool --help'"),
        (["group"], "missing subcommand", "Usage: tool group <subcommand>", "See 'tool group --help'"),
        (
            ["echo", "x", "--server", "nope:0"],
            "invalid server address 'nope:0' in --server; expected host, host:port or [v6]:port",
            "Usage: tool echo", "See 'tool echo --help'"
        ),
        (
            ["echo", "x", "--server", "host:0"],
            "invalid server address 'host:0' in --server; expected host, host:port or [v6]:port",
            "Usage: tool echo", "See 'tool echo --help'"
        ),
        (["echo", "x", "--subject="], "the subject is empty", "Usage: tool echo", "See 'tool echo --help'"),
        (["fail", "usage"], "bad combination", "Usage: tool fail", "See 'tool fail --help'"),
        (["help", "nosuch"], "unknown command 'nosuch'", "Usage: tool [<options>] <command>", "See 'tool --help'"),
    ])
    func usageErrorsExit64WithAHint(arguments: [String], message: String, usage: String, hint: String) async {
        let result = await runHKQ(arguments, program: testProgram)
        #expect(result.status == 64)
        #expect(result.out == "")
        let lines = result.err.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first == "error: \(message)")
        #expect(lines.count > 1 && lines[1].hasPrefix(usage))
        #expect(lines.count > 2 && lines[2].contains(hint))
    }

    @Test func badEnvironmentServerIsAUsageError() async {
        let result = await runHKQ(["echo", "x"], environment: ["HKQ_SERVER": "host:"], program: testProgram)
        #expect(result.status == 64)
        #expect(
            result.err.hasPrefix(
                "error: invalid server address 'host:' in HKQ_SERVER; expected host, host:port or [v6]:port\n"))
    }

    @Test func runtimeErrorsPrintOneLineAndExitWithTheirKindsStatus() async {
        let health = await runHKQ(["fail", "health"], program: testProgram)
        #expect(health.status == 2, "no data")
        #expect(health.err == "error: no data for stepCount\n")
        #expect(health.out == "")
        let other = await runHKQ(["fail", "other"], program: testProgram)
        #expect(other.status == 1)
        #expect(other.err == "error: something else broke\n")
    }

    @Test func commandExitChoosesTheStatus() async {
        let result = await runHKQ(["fail", "exit"], program: testProgram)
        #expect(result.status == 3)
        #expect(result.out == "partial output\n")
        #expect(result.err == "")
    }

    @Test(arguments: [["--help"], ["-h"], ["help"], ["--subject", "x", "--help"]])
    func topLevelHelp(arguments: [String]) async {
        let result = await runHKQ(arguments, program: testProgram)
        #expect(result.status == 0)
        #expect(result.err == "")
        let out = result.out
        #expect(out.hasPrefix("OVERVIEW: A test tool.\n\nUSAGE: tool [<options>] <command>\n"))
        #expect(out.contains("\nCOMMANDS:\n  echo                    Print the parsed command line.\n"))
        #expect(out.contains("  group                   A group of commands.\n"))
        #expect(out.contains("  help                    Show help for hkq or one of its commands.\n"))
        #expect(out.contains("\nOPTIONS:\n  --server <host:port>    "))
        #expect(
            out.contains(
                "  --format <format>       Output format: table, json, csv, ndjson (listings: one JSON object a "
                    + "line) or chart (collection and sleep, fitted to $COLUMNS or the terminal; default: table).\n"
            ))
        #expect(out.contains("  -h, --help              Show help information.\n"))
        #expect(out.hasSuffix("  See 'tool help <command>' for detailed help.\n"))
        // Sections come in swift-argument-parser's order.
        let order = ["OVERVIEW:", "USAGE:", "COMMANDS:", "OPTIONS:"].map { out.range(of: $0)?.lowerBound }
        #expect(order.allSatisfy { $0 != nil })
        #expect(order.compactMap { $0 } == order.compactMap { $0 }.sorted())
    }

    @Test(arguments: [
        ["help", "echo"], ["echo", "--help"], ["echo", "-h"], ["--help", "echo"], ["echo", "x", "--help"],
    ])
    func commandHelp(arguments: [String]) async {
        let result = await runHKQ(arguments, program: testProgram)
        #expect(result.status == 0)
        let out = result.out
        #expect(out.hasPrefix("OVERVIEW: Print the parsed command line.\n"))
        #expect(
            out.contains(
                "\nUSAGE: tool echo [--limit <n>] [--ascending] [--source <name>] [--sort-order <order>] [<global-options>] <type> [<rest> ...]\n"
            ))
        #expect(
            out.contains(
                "\nARGUMENTS:\n  <type>                  A quantity type.\n  <rest>                  Anything else.\n"))
        #expect(
            out.contains(
                "\nOPTIONS:\n  --limit <n>             At most n rows.\n  --ascending             Oldest first.\n"))
        #expect(out.contains("\nGLOBAL OPTIONS:\n  --server <host:port>"))
        #expect(!out.contains("COMMANDS:"))
    }

    @Test(arguments: [
        ["help", "group"], ["group", "--help"], ["help", "group", "echo"], ["group", "echo", "--help"],
    ])
    func groupAndNestedHelp(arguments: [String]) async {
        let result = await runHKQ(arguments, program: testProgram)
        #expect(result.status == 0)
        if arguments.contains("echo") {
            #expect(result.out.contains("USAGE: tool group echo [--limit <n>]"))
        } else {
            #expect(result.out.hasPrefix("OVERVIEW: A group of commands.\n\nUSAGE: tool group <subcommand>\n"))
            #expect(result.out.contains("\nSUBCOMMANDS:\n  echo                    Print the parsed command line.\n"))
            #expect(result.out.hasSuffix("  See 'tool help group <subcommand>' for detailed help.\n"))
        }
    }

    @Test func longLabelsWrapToTheNextLine() {
        let row = HelpFormatter.row("--a-very-long-option-name <value>", "Help.")
        #expect(row == "  --a-very-long-option-name <value>\n                          Help.\n")
    }

    @Test(
        arguments: [
            ("127.0.0.1:7420", "127.0.0.1", 7420), ("localhost:1", "localhost", 1), ("[::1]:65535", "::1", 65535),
            ("db.example.org:80", "db.example.org", 80),
        ] as [(String, String, UInt16)])
    func serverAddressesParse(text: String, host: String, port: UInt16) {
        let address = ServerAddress(parsing: text)
        #expect(address == ServerAddress(host: host, port: port))
        #expect(address?.description == text)
    }

    @Test(arguments: [
        "", ":7420", "host:", "host:0", "host:65536", "host:-1", "::1:7420", "[::1]7420", "[::1", "h:+80",
    ])
    func badServerAddressesFail(text: String) {
        #expect(ServerAddress(parsing: text) == nil)
    }

    @Test("a host without a port gets the default port")
    func hostAlone() {
        #expect(ServerAddress(parsing: "db.example.org") == ServerAddress(host: "db.example.org", port: 7420))
        #expect(ServerAddress(parsing: "127.0.0.1")?.description == "127.0.0.1:7420")
    }

    @Test("unknown commands and options suggest the nearest; hkq --version prints the version")
    func suggestionsAndVersion() async {
        let stat = await runHKQ(["stat", "stepCount"])
        #expect(stat.status == 64)
        #expect(stat.err.hasPrefix("error: unknown command 'stat'; did you mean 'stats'?\n"), "\(stat.err)")
        let form = await runHKQ(["samples", "stepCount", "--form", "json"])
        #expect(form.err.hasPrefix("error: unknown option '--form'; did you mean '--format'?\n"), "\(form.err)")
        let far = await runHKQ(["xyzzy"])
        #expect(far.err.hasPrefix("error: unknown command 'xyzzy'\n"), "\(far.err)")
        let version = await runHKQ(["--version"])
        #expect(version.status == 0)
        #expect(version.out == "hkq \(ProjectVersion.current)\n")
    }

    @Test(
        "--version after global options, and the version command, print what hkq --version prints",
        arguments: [["--server", "db.example.org:7420", "--version"], ["--format=json", "--version"], ["version"]])
    func versionAfterGlobalsAndAsACommand(arguments: [String]) async {
        let result = await runHKQ(arguments)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err == "")
        #expect(result.out == "hkq \(ProjectVersion.current)\n")
    }

    @Test("--version takes no command")
    func versionWithACommand() async {
        let after = await runHKQ(["types", "--version"])
        #expect(after.status == 64)
        #expect(after.err.hasPrefix("error: unknown option '--version'"), "\(after.err)")
        let before = await runHKQ(["--version", "types"])
        #expect(before.status == 64)
        #expect(before.err.hasPrefix("error: '--version' takes no command\n"), "\(before.err)")
        let extra = await runHKQ(["version", "now"])
        #expect(extra.status == 64)
    }

    @Test("--token-file and HKQ_TOKEN_FILE read the token from a file; a missing one is a usage error")
    func tokenFiles() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hkq-token-\(UUID().uuidString)").path
        try "  hkd1_secret\n".write(toFile: path, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFlag = await runHKQ(["echo", "x", "--token-file", path], program: testProgram)
        #expect(fromFlag.out.contains("token=hkd1_secret"), "\(fromFlag.out)")
        let fromEnvironment = await runHKQ(["echo", "x"], environment: ["HKQ_TOKEN_FILE": path], program: testProgram)
        #expect(fromEnvironment.out.contains("token=hkd1_secret"), "\(fromEnvironment.out)")
        let explicitWins = await runHKQ(["echo", "x", "--token", "t2", "--token-file", path], program: testProgram)
        #expect(explicitWins.out.contains("token=t2"))
        let missing = await runHKQ(["echo", "x", "--token-file", path + ".missing"], program: testProgram)
        #expect(missing.status == 64)
        #expect(
            missing.err.hasPrefix("error: cannot read a token from '\(path).missing' (--token-file)"), "\(missing.err)")
    }

    @Test("a token file other users can read is used, with a warning on stderr naming it and the fix")
    func tokenFileReadableByOthers() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hkq-token-\(UUID().uuidString)").path
        try "hkd1_secret\n".write(toFile: path, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let warning =
            "warning: the token file '\(path)' (--token-file) is readable by other users (mode 644); "
            + "run chmod 600 \(path)\n"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let open = await runHKQ(["echo", "x", "--token-file", path], program: testProgram)
        #expect(open.status == 0)
        #expect(open.out.contains("token=hkd1_secret"), "\(open.out)")
        #expect(open.err == warning, "\(open.err)")
        let fromEnvironment = await runHKQ(["echo", "x"], environment: ["HKQ_TOKEN_FILE": path], program: testProgram)
        #expect(fromEnvironment.err.contains("'\(path)' (HKQ_TOKEN_FILE) is readable by other users"))
        // A token given outright wins, and the file is not looked at.
        let explicit = await runHKQ(["echo", "x", "--token", "t2", "--token-file", path], program: testProgram)
        #expect(explicit.err.isEmpty, "\(explicit.err)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let closed = await runHKQ(["echo", "x", "--token-file", path], program: testProgram)
        #expect(closed.out.contains("token=hkd1_secret"))
        #expect(closed.err.isEmpty, "\(closed.err)")
    }

    @Test(arguments: [("-40", false), ("-.5", false), ("-h", true), ("--x", true), ("-", false), ("x", false)])
    func negativeNumbersAreNotOptions(word: String, isOption: Bool) {
        #expect(ArgumentParser.looksLikeOption(word) == isOption)
    }

    @Test(
        "trimming takes spaces and tabs (Unicode spaces too) off both ends and leaves everything else",
        arguments: [
            ("stepCount", "stepCount"), (" stepCount ", "stepCount"), ("\tcount/min\t", "count/min"), ("", ""),
            ("   ", ""), ("\u{00A0}kg\u{00A0}", "kg"), ("é", "é"), ("a b", "a b"), ("\n1\n", "\n1\n"),
        ])
    func trimming(text: String, trimmed: String) {
        #expect(text.trimmingWhitespace == trimmed)
        #expect(text.trimmingWhitespace == text.trimmingCharacters(in: .whitespaces))
        #expect(Substring(text).trimmingWhitespace == trimmed)
    }
}
