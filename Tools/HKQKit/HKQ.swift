import Foundation
import HealthClient
import HealthModel
import HealthPosix

/// The hkq program: its commands, global options and help, and the driver that runs one command line.
///
/// `HKQ.standard` is the real tool; tests build one with other commands to exercise the parser.
public struct HKQ: Sendable {
    /// The program name used in usage lines.
    public var name: String
    /// One line shown as the top-level OVERVIEW.
    public var overview: String
    /// The top-level commands, in help order.
    public var commands: [any Command]
    /// Options accepted before and after any command name.
    public var globalOptions: [OptionSpec]
    /// What `now` (and so `today`, `now-7d`…) means; tests fix it.
    public var clock: @Sendable () -> Timestamp
    /// Where a local server's admin token is looked for when none is given (``LocalToken/defaultPath``); tests
    /// point it away from the working directory, which may hold a real `./hkd-data`.
    public var localTokenPath: String
    /// Whether commands run on a thread of their own (the process's main thread, in ``main()``), where blocking
    /// holds up nothing else: a command then connects in place instead of handing the blocking connect to a
    /// dispatch thread. Off for commands run in-process by tests, whose tasks share Swift's global executor.
    public var ownsThread = false
    /// Set when the server runs hkq's commands itself (hkd's HTTP API): the client commands use instead of a
    /// connection to `--server`, answering in the same process.
    package var inProcessClient: (@Sendable () -> HealthClient)?
    /// What `-` reads instead of the process's standard input (an HTTP request's body).
    package var standardInput: [UInt8]?

    /// A program with the given commands, global options and clock (the system clock by default).
    public init(
        name: String = "hkq", overview: String = HKQ.defaultOverview, commands: [any Command],
        globalOptions: [OptionSpec] = GlobalOptions.specs, clock: @escaping @Sendable () -> Timestamp = HKQ.systemClock,
        localTokenPath: String = LocalToken.defaultPath
    ) {
        self.name = name
        self.overview = overview
        self.commands = commands
        self.globalOptions = globalOptions
        self.clock = clock
        self.localTokenPath = localTokenPath
    }

    /// The current time, in microseconds since the epoch.
    public static let systemClock: @Sendable () -> Timestamp = {
        Timestamp((Date().timeIntervalSince1970 * 1e6).rounded())
    }

    /// The top-level OVERVIEW line of hkq.
    public static let defaultOverview = "Query, import, watch and administer an hkd health data server."

    /// Every hkq command. A new command is one file in `Commands/` plus one entry here.
    public static let commands: [any Command] = [
        InsertCommand(),
        SamplesCommand(),
        StatsCommand(),
        ServerInfoCommand(),
        ClusterCommand.group,
        TypesCommand(),
        CollectionCommand(),
        SleepCommand(),
        WorkoutsCommand(),
        ActivityCommand(),
        CharacteristicsCommand(),
        RouteCommand(),
        ChangesCommand(),
        WatchCommand(),
        SourcesCommand(),
        UnitsCommand.group,
        DeleteCommand(),
        ImportCommand(),
        AuthCommand.group,
        AdminCommand.group,
        CompletionCommand(),
        VersionCommand(),
        HelpCommand(),
    ]

    /// The real tool.
    public static let standard = HKQ(commands: commands)

    /// What `hkq --version` and `hkq version` print: `hkq 1.4.0` and a newline.
    public var versionLine: String { "\(name) \(ProjectVersion.current)\n" }

    /// The help formatter over this program's commands.
    public var helpFormatter: HelpFormatter {
        HelpFormatter(program: name, overview: overview, commands: commands, globalOptions: globalOptions)
    }

    /// Parses `arguments` (without the program name), runs the command and returns the exit status, one of
    /// ``ExitStatus``: 0 success; for an error, the status of its kind (``ExitStatus/init(for:)``) after
    /// `error: <message>` on stderr (a usage error adds the usage and a hint).
    public func run(arguments: [String], environment: [String: String], console: Console) async -> Int32 {
        do {
            try await execute(arguments: arguments, environment: environment, console: console)
            return ExitStatus.success.rawValue
        } catch {
            reportFailure(error, console: console)
            return ExitStatus(for: error).rawValue
        }
    }

    /// Parses `arguments` and runs the command, throwing what ended it: a ``UsageError``, a ``HealthError``, or a
    /// ``CommandExit`` after the command printed its own message.
    package func execute(arguments: [String], environment: [String: String], console: Console) async throws {
        let parser = ArgumentParser(commands: commands, globalOptions: globalOptions)
        let parse = try parser.parse(arguments)
        let path = parse.path
        if parse.wantsHelp {
            console.out.write(helpFormatter.help(for: parse.commands))
            return
        }
        if parse.wantsVersion {
            console.out.write(versionLine)
            return
        }
        let globals = try GlobalOptions.resolve(
            options: parse.arguments.options, flags: parse.arguments.flags, environment: environment,
            commandPath: path)
        for warning in globals.warnings { console.printError("warning: \(warning)") }
        let context = CommandContext(
            program: self, commandPath: path, arguments: parse.arguments, globals: globals,
            environment: environment, console: console)
        let command = parse.commands.last!
        if globals.format == .chart, !command.spec.drawsChart {
            throw context.usageError(
                "'\(path.joined(separator: " "))' draws no chart; use --format table, json or csv")
        }
        if globals.jsonLines, !command.spec.printsJSONLines {
            throw context.usageError(
                "'\(path.joined(separator: " "))' prints no listing; --format ndjson applies to samples, changes, "
                    + "workouts, sleep and collection")
        }
        if globals.fields != nil {
            let words = path.joined(separator: " ")
            guard command.spec.selectsFields else {
                throw context.usageError(
                    "'\(words)' does not print a list of records; --fields applies to commands that do")
            }
            if globals.format == .chart { throw context.usageError("--fields does not apply to --format chart") }
        }
        let paging = pagingSink(for: command, globals: globals, environment: environment, console: console)
        defer { paging?.finish() }
        let lines = globals.jsonLines ? JSONLinesSink(paging ?? console.out) : nil
        defer { lines?.finish() }
        let out: (any TextSink)? = lines ?? paging
        try await command.run(out.map { context.printing(to: $0) } ?? context)
    }

    /// Standard output through a pager (``Pager``) for a command that lists records on a terminal; nil otherwise.
    func pagingSink(
        for command: any Command, globals: GlobalOptions, environment: [String: String], console: Console
    ) -> PagingSink? {
        guard command.spec.selectsFields, let terminal = console.terminal,
            let pager = Pager.command(environment: environment, terminal: terminal, noPager: globals.noPager)
        else { return nil }
        return PagingSink(terminal: console.out, screenLines: terminal.rows) { PagerChild.start(pager) }
    }

    /// Prints what ended a command: `error: <message>` (for a usage error also the usage and a hint); nothing for
    /// a ``CommandExit``, whose command printed what it wanted.
    func reportFailure(_ error: any Error, console: Console) {
        switch error {
        case let usage as UsageError: report(usage, console: console)
        case is CommandExit: break
        case let error as HealthError: console.printError("error: \(error.message)")
        default: console.printError("error: \(error)")
        }
    }

    /// Prints a usage error: the message, the usage of the command it concerns, and where to find help.
    func report(_ error: UsageError, console: Console) {
        let formatter = helpFormatter
        let chain = formatter.resolve(error.commandPath) ?? []
        let words = ([name] + chain.map(\.spec.name)).joined(separator: " ")
        console.printError("error: \(error.message)")
        console.printError("Usage: \(formatter.usage(for: chain))")
        console.printError("  See '\(words) --help' for more information.")
    }

    /// Runs the process's own command line with the real environment and exits with the command's status.
    ///
    /// The command runs as a task on the calling (main) thread (`ThreadExecutor`), which the process then
    /// lends to it until the task exits the process: no dispatch thread is started for it, and it connects in
    /// place (``ownsThread``), so a query's reply is read on this thread too and no thread is started at all.
    /// An `async` top level would park the main thread in `dispatch_main`, which ends it with `pthread_exit`: a
    /// forced unwind of its stack, whose first lookup of frame descriptions costs a process linked statically
    /// milliseconds (it sorts every one of them).
    public static func main() -> Never {
        let executor = ThreadExecutor()
        var program = standard
        program.ownsThread = true
        Task(executorPreference: executor) {
            let status = await program.run(
                arguments: Array(CommandLine.arguments.dropFirst()),
                environment: hkqVariables(in: environ), console: .standard)
            exit(status)
        }
        executor.run()
        fatalError("hkq's command task ends the process; nothing stops its executor")
    }

    /// The `HKQ_*` variables of `environment` (a `NAME=value` list ending in null, as `environ`) and
    /// ``sharedVariables``, the only ones hkq reads (``GlobalOptions/environmentVariables``): Foundation's
    /// `ProcessInfo` would first set itself up, then hash every variable into a dictionary, a twentieth of a short
    /// command's time.
    static func hkqVariables(in environment: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> [String: String] {
        var variables: [String: String] = [:]
        var cursor = environment
        while let entry = cursor.pointee {
            cursor += 1
            let initial = UInt8(bitPattern: entry.pointee)
            guard initial == UInt8(ascii: "H") || initial == UInt8(ascii: "P") || initial == UInt8(ascii: "C"),
                let equals = strchr(entry, Int32(UInt8(ascii: "=")))
            else { continue }
            let name = String(decoding: UnsafeRawBufferPointer(start: entry, count: equals - entry), as: UTF8.self)
            guard name.hasPrefix("HKQ_") || sharedVariables.contains(name) else { continue }
            variables[name] = String(cString: equals + 1)
        }
        return variables
    }

    /// The variables other programs also read that hkq honours: the pager and the terminal's width.
    static let sharedVariables: Set<String> = ["PAGER", "COLUMNS"]
}

/// Runs hkq in-process: `arguments` without the program name; output goes to `console`. Returns the exit status.
public func hkqMain(arguments: [String], environment: [String: String], console: Console) async -> Int32 {
    await HKQ.standard.run(arguments: arguments, environment: environment, console: console)
}
