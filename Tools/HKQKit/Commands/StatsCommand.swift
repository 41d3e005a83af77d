import HealthClient
import HealthModel
import HealthWire

/// `hkq stats TYPE`: HealthKit's statistics query over the matching samples, merged across sources.
public struct StatsCommand: Command {
    /// A stats command.
    public init() {}

    /// `stats <type>` with `--options` and the query options.
    public var spec: CommandSpec {
        CommandSpec(
            name: "stats", abstract: "Sum, average, min, max, most recent or duration of a type (statistics query).",
            discussion: QueryScope.discussion + """


                --options takes \(StatisticsOptionNames.shortNames) or HealthKit's names (cumulativeSum, \
                discreteAverage, discreteMin, discreteMax, mostRecent, duration, separateBySource), comma-separated \
                or repeated. Default: sum for cumulative types, avg,min,max for discrete ones, duration,by-value \
                for category types (sleepAnalysis, appleStandHour, …): the time covered per value, merged across \
                sources by priority. Sources are merged by priority; by-source adds each source's own figures. Durations print as 2h 05m in tables and as \
                seconds in JSON and CSV. When no sample matches, hkq prints "no TYPE data for subject ..." on \
                standard error and exits 1.

                Example (today's steps): hkq stats stepCount --options sum --from today
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount or heartRate.")],
            options: [
                .option("options", value: "list", help: "Figures to compute: \(StatisticsOptionNames.shortNames).")
            ] + QueryScope.specs + [WorkoutScope.spec])
    }

    /// Runs the query and prints the figures; no data prints a line on standard error and exits 1.
    public func run(_ context: CommandContext) async throws {
        let type = try QuantityType.named(context.argument(0)!)
        let scope = try QueryScope(context)
        if let stray = scope.unusedUnitKeys([type]).first {
            throw context.usageError("--unit names '\(stray)', which is not the type queried")
        }
        var options: StatisticsOptions
        do {
            options = try StatisticsOptionNames.parse(context.arguments.values("options"))
        } catch {
            throw context.usageError(
                "unknown statistics option '\(error.name)'; expected \(StatisticsOptionNames.shortNames)")
        }
        if options.isEmpty || options == .separateBySource {
            options.formUnion(StatisticsOptionNames.defaults(for: type))
        }
        try options.validate(for: type)
        let unit = try scope.unit(for: type)
        let subject = context.globals.subject
        let filter = try QueryScope.filter(scope.filter.inQueryUnit(unit), values: context, for: type)
        let answer = try await ServerSession.run(context) { client in
            try await client.statistics(
                type.identifier, subject: subject, options: options,
                filter: try await WorkoutScope.narrow(filter, type: type, context: context, client: client),
                unit: unit.symbol)
        }
        guard let result = answer else {
            context.console.printError(StatsCommand.noDataMessage(type: type, subject: subject, scope: scope))
            throw CommandExit(.noData)
        }
        let records = StatisticsRecords(
            type: type, unit: result.unit, statistics: result.statistics, options: options, times: scope.times,
            format: context.globals.format)
        context.console.printBlock(records.rendered())
    }

    /// `no stepCount data for subject "me" between … and …` (with the sources when filtered).
    static func noDataMessage(type: QuantityType, subject: String, scope: QueryScope) -> String {
        var message = "no \(type.identifier) data for subject \"\(subject)\" \(scope.rangeDescription)"
        if let sources = scope.filter.sources {
            message += " from " + sources.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        }
        return message
    }
}
