import Foundation

/// One `hkbench` subcommand. To add one, write a type conforming to this and list it in ``HKBench/commands``.
protocol BenchCommand: Sendable {
    /// The word that selects the command, e.g. `codec`.
    static var name: String { get }
    /// One line for the command list.
    static var abstract: String { get }
    /// The OPTIONS lines of `hkbench <name> --help`.
    static var options: [(flag: String, help: String)] { get }
    /// Runs the command with its own arguments; throws ``UsageError`` for bad arguments.
    static func run(_ options: ParsedOptions) throws
}

/// The subcommand dispatcher: `hkbench <command> [options]`, `hkbench help [command]`.
enum HKBench {
    /// Every subcommand, in the order `hkbench help` lists them.
    static let commands: [any BenchCommand.Type] = [
        CodecBenchmark.self, BlockBenchmark.self, W1Benchmark.self, W2Benchmark.self, W3Benchmark.self,
        CapacityBenchmark.self,
        StorageBenchmark.self,
        ImportBenchmark.self, HKQBenchmark.self, DatasetCommand.self, ExportCommand.self, LiveBenchmark.self,
    ]

    /// Runs the command line and returns the exit status: 0 done, 1 failed, 64 usage error.
    static func main(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first, !["help", "-h", "--help"].contains(first) else {
            let topic = arguments.dropFirst().first
            if let topic, let command = command(named: topic) {
                print(help(for: command))
            } else {
                print(overview)
            }
            return 0
        }
        guard let command = command(named: first) else {
            printError("hkbench: unknown command '\(first)'\n\n\(overview)")
            return 64
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print(help(for: command))
            return 0
        }
        do {
            try command.run(try ParsedOptions(rest, known: command.options.map(\.flag)))
            return 0
        } catch let error as UsageError {
            printError("hkbench \(command.name): \(error.message)\n\n\(help(for: command))")
            return 64
        } catch {
            printError("hkbench \(command.name): \(error)")
            return 1
        }
    }

    static func command(named name: String) -> (any BenchCommand.Type)? {
        commands.first { $0.name == name }
    }

    static var overview: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let list = commands.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.abstract)" }
        return """
            OVERVIEW: benchmarks of hkd's codec, engine and server against the peers of docs/PEERS.md

            USAGE: hkbench <command> [options]

            COMMANDS:
            \(list.joined(separator: "\n"))

              See 'hkbench help <command>' for a command's options.
            """
    }

    static func help(for command: any BenchCommand.Type) -> String {
        let lines = command.options + [("-h, --help", "Show this help.")]
        let width = lines.map { $0.flag.count }.max() ?? 0
        let options = lines.map { "  \($0.flag.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.help)" }
        return """
            OVERVIEW: \(command.abstract)

            USAGE: hkbench \(command.name) [options]

            OPTIONS:
            \(options.joined(separator: "\n"))
            """
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// A bad command line; the message says what is wrong. Exit status 64.
struct UsageError: Error {
    var message: String
}

/// `--flag value` pairs of one command line, checked against the command's known flags.
struct ParsedOptions {
    private var values: [String: String] = [:]

    /// Parses `arguments`; `known` holds flag specs such as `--level <n>` (the first word is the flag).
    init(_ arguments: [String], known: [String]) throws {
        let flags = Set(known.compactMap { $0.split(separator: " ").first.map(String.init) })
        var index = 0
        while index < arguments.count {
            let flag = arguments[index]
            guard flags.contains(flag) else { throw UsageError(message: "unknown option '\(flag)'") }
            guard index + 1 < arguments.count else { throw UsageError(message: "\(flag) needs a value") }
            values[flag] = arguments[index + 1]
            index += 2
        }
    }

    /// The text given for `flag`, or nil.
    func string(_ flag: String) -> String? { values[flag] }

    /// The integer given for `flag`, or `fallback`; throws unless it lies in `range`.
    func integer(_ flag: String, default fallback: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = values[flag] else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(message: "\(flag) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }
}
