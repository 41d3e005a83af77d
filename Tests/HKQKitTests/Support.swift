import HKQKit
import HealthModel

/// What one in-process run of hkq printed and returned.
struct RunResult: Sendable {
    var status: Int32
    var out: String
    var err: String
}

/// Where the test programs look for a local server's admin token: nowhere that exists. Not the working
/// directory's `./hkd-data`, which README's quick start may have filled with a real one.
let noLocalTokenPath = "/nonexistent/hkq-tests/admin.token"

/// ``HKQ/standard`` without the working directory's `./hkd-data/admin.token`.
let testHKQ = HKQ(commands: HKQ.commands, localTokenPath: noLocalTokenPath)

/// Runs `program` in-process on `arguments` with `environment`, capturing both streams.
func runHKQ(_ arguments: [String], environment: [String: String] = [:], program: HKQ = testHKQ) async -> RunResult {
    let (console, out, err) = Console.capturing()
    let status = await program.run(arguments: arguments, environment: environment, console: console)
    return RunResult(status: status, out: out.text, err: err.text)
}

/// Prints what it was given, so tests can see how the command line was parsed.
struct EchoCommand: Command {
    var spec: CommandSpec {
        CommandSpec(
            name: "echo", abstract: "Print the parsed command line.",
            arguments: [
                ArgumentSpec("type", help: "A quantity type."),
                ArgumentSpec("rest", help: "Anything else.", isOptional: true, isVariadic: true),
            ],
            options: [
                .option("limit", value: "n", help: "At most n rows."),
                .flag("ascending", help: "Oldest first."),
                .option("source", value: "name", help: "A source; repeatable."),
                .option("sort-order", value: "order", help: "asc or desc.", allowedValues: ["asc", "desc"]),
            ])
    }

    func run(_ context: CommandContext) async throws {
        let limit = try context.integer(option: "limit").map(String.init) ?? "-"
        let g = context.globals
        context.print("server=\(g.server) subject=\(g.subject) token=\(g.token ?? "-") format=\(g.format)")
        context.print("args=\(context.arguments.positionals.joined(separator: "|"))")
        let order = context.arguments.value("sort-order") ?? "-"
        context.print("limit=\(limit) ascending=\(context.arguments.flag("ascending")) order=\(order)")
        context.print("sources=\(context.arguments.values("source").joined(separator: "|"))")
    }
}

/// Fails in the ways a command can fail.
struct FailCommand: Command {
    var spec: CommandSpec {
        CommandSpec(
            name: "fail", abstract: "Fail on purpose.",
            arguments: [ArgumentSpec("how", help: "health, exit, other or usage.")])
    }

    struct Other: Error, CustomStringConvertible {
        var description: String { "something else broke" }
    }

    func run(_ context: CommandContext) async throws {
        switch context.argument(0) {
        case "health": throw HealthError(.noData, "no data for stepCount")
        case "exit":
            context.print("partial output")
            throw CommandExit(.partialImport)
        case "usage": throw context.usageError("bad combination")
        default: throw Other()
        }
    }
}

/// A small program with a group, for parser tests.
let testProgram = HKQ(
    name: "tool", overview: "A test tool.",
    commands: [
        EchoCommand(), FailCommand(),
        CommandGroup(name: "group", abstract: "A group of commands.", subcommands: [EchoCommand()]), HelpCommand(),
    ])
