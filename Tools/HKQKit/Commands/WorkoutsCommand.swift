import Foundation
import HealthClient
import HealthModel

/// `hkq workouts [--type running,walking] [--from] [--to] [--by week|month]`: the subject's workouts
/// (HEALTHKIT.md §13) as rows, or their count, total duration, distance and energy per activity type and week or
/// month.
public struct WorkoutsCommand: Command {
    /// A workouts command.
    public init() {}

    /// `workouts` with its options.
    public var spec: CommandSpec {
        CommandSpec(
            name: "workouts", abstract: "List workouts, or their totals per week or month and activity type.",
            discussion: """
                Workouts starting at or after --from and before --to. Columns: start, end, type (HealthKit's \
                activity type: running, walking, mixedCardio …), duration (minutes of activity), distance (km), \
                energy (kcal), source, events, sameAs and uuid (JSON and CSV only); JSON adds the metadata. A \
                workout with the activity type, start, end and source of an earlier one in the list is likely the \
                same workout written twice (companion apps sync a run more than once): sameAs names the first of \
                its group (SAME AS in tables, its UUID's first 8 digits), and --distinct leaves the repeats out, \
                so each group counts once. With --by week (weeks from Monday) or month, one row per period (by the \
                workout's start in --tz) and activity type: count, duration, distance and energy summed. Example: \
                hkq workouts --type running --from 2024-01-01 --by month --distinct. The samples of one workout: \
                hkq samples heartRate --workout UUID.
                """,
            options: [
                .option("type", value: "types", help: "Only these activity types, comma-separated (running,walking)."),
                .option("from", value: "date", help: "Workouts starting at or after this date."),
                .option("to", value: "date", help: "Workouts starting before this date."),
                .option("tz", value: "zone", help: "IANA time zone for dates, periods and output (default: local)."),
                .option(
                    "by", value: "period", help: "week or month: totals per period.", allowedValues: ["week", "month"]),
                .option("limit", value: "n", help: "At most n workouts; 0 means no limit (default: 0)."),
                .flag("distinct", help: "Count each group of likely duplicates once (leave out the repeats)."),
            ], selectsFields: true, printsJSONLines: true)
    }

    /// Queries the workouts and prints them or their totals.
    public func run(_ context: CommandContext) async throws {
        let timeZone = try QueryScope.timeZone(context)
        let times = TimestampFormatter(timeZone: timeZone, timeFormat: context.globals.timeFormat)
        let dates = DateArgumentParser(timeZone: timeZone, now: context.program.clock())
        func bound(_ name: String) throws -> Timestamp? {
            guard let text = context.arguments.value(name) else { return nil }
            guard let instant = dates.parse(text) else {
                throw context.usageError(
                    "invalid date '\(text)' for '--\(name)'; expected \(DateArgumentParser.expected)")
            }
            return instant
        }
        var filter = WorkoutFilter(start: try bound("from"), end: try bound("to"))
        if let text = context.arguments.value("type") {
            for name in text.split(separator: ",").map(\.trimmingWhitespace) {
                do {
                    filter.activityTypes.insert(try WorkoutActivityType.parse(name))
                } catch let error as HealthError {
                    throw context.usageError(error.message + " for '--type'")
                }
            }
        }
        let limit = try context.integer(option: "limit") ?? 0
        if limit < 0 { throw context.usageError("invalid value '\(limit)' for '--limit'; expected 0 or more") }
        let subject = context.globals.subject
        let result = try await ServerSession.run(context) { client in
            try await client.workouts(subject: subject, filter: filter, limit: UInt64(limit))
        }
        var workouts = result.workouts.map(\.workout)
        let duplicates = LikelyDuplicates(workouts)
        if context.arguments.flag("distinct") { workouts = duplicates.distinct(workouts) }
        let format = context.globals.format
        if let period = context.arguments.value("by") {
            let totals = WorkoutTotals(workouts, period: period == "week" ? .weekOfYear : .month, timeZone: timeZone)
            try context.print(totals.records(times: times, format: format))
            return
        }
        let records = Self.records(workouts, duplicates: duplicates, times: times, format: format)
        guard format == .json else {
            try context.print(records, extraFields: ["metadata"])
            return
        }
        context.console.printBlock(
            try SamplesCommand.jsonWithMetadata(records, workouts.map(\.metadata), times: times, context: context))
    }

    /// One record per workout, each repeat marked with the first of its group.
    static func records(
        _ workouts: [Workout], duplicates: LikelyDuplicates, times: TimestampFormatter, format: OutputFormat
    ) -> RecordSet {
        var records = RecordSet(columns: [
            .init("start", title: "START"), .init("end", title: "END"), .init("type", title: "TYPE"),
            .init("duration", title: "MIN", roundedInTable: true), .init("distance", title: "KM", roundedInTable: true),
            .init("energy", title: "KCAL", roundedInTable: true), .init("source", title: "SOURCE"),
            .init("events", title: "EVENTS"), .init("sameAs", title: "SAME AS"),
            .init("uuid", title: "UUID", inTable: false),
        ])
        for workout in workouts {
            let first = duplicates.repeated(by: workout)
            let whole = format == .json || format == .csv
            let sameAs: JSONValue =
                first.map { .string(whole ? $0.uuidString : String($0.uuidString.prefix(8))) }
                ?? (whole ? .null : .string(""))
            records.append([
                times.cell(workout.start, format: format), times.cell(workout.end, format: format),
                .string(workout.activityType.name), .number(WorkoutTotals.minutes(workout.duration)),
                WorkoutTotals.cell(workout.totalDistance, WorkoutTotals.kilometres),
                WorkoutTotals.cell(workout.totalEnergyBurned, WorkoutTotal.energyUnit),
                .string(workout.source.name), .integer(Int64(workout.events.count)), sameAs,
                .string(workout.uuid.uuidString),
            ])
        }
        return records
    }
}

/// Workouts summed per calendar period and activity type: count, minutes, kilometres, kilocalories. Figures keep
/// every digit (JSON and CSV print them as numbers do everywhere); tables round them for people.
struct WorkoutTotals {
    struct Key: Hashable, Comparable {
        var period: Timestamp
        var type: WorkoutActivityType
        static func < (a: Key, b: Key) -> Bool { (a.period, a.type.rawValue) < (b.period, b.type.rawValue) }
    }

    struct Sums {
        var count = 0
        /// Microseconds, summed as a double: exact up to 2⁵³ µs (285 years), and no sum can overflow.
        var duration = 0.0
        var kilometres = 0.0
        var kilocalories = 0.0
    }

    var sums: [Key: Sums] = [:]

    /// The totals of `workouts` per `period` (`.weekOfYear` from Monday, or `.month`) in `timeZone`.
    init(_ workouts: [Workout], period: Calendar.Component, timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.firstWeekday = 2
        for workout in workouts {
            let date = Date(timeIntervalSince1970: Double(workout.start) / 1e6)
            let start = calendar.dateInterval(of: period, for: date)?.start ?? date
            let key = Key(period: Timestamp((start.timeIntervalSince1970 * 1e6).rounded()), type: workout.activityType)
            sums[key, default: Sums()].count += 1
            sums[key]!.duration += Double(workout.duration)
            sums[key]!.kilometres += workout.totalDistance?.value(in: Self.kilometres) ?? 0
            sums[key]!.kilocalories += workout.totalEnergyBurned?.value(in: WorkoutTotal.energyUnit) ?? 0
        }
    }

    /// One record per period and type, in period order.
    func records(times: TimestampFormatter, format: OutputFormat) -> RecordSet {
        var records = RecordSet(columns: [
            .init("period", title: "PERIOD"), .init("type", title: "TYPE"), .init("count", title: "COUNT"),
            .init("duration", title: "MIN", roundedInTable: true), .init("distance", title: "KM", roundedInTable: true),
            .init("energy", title: "KCAL", roundedInTable: true),
        ])
        for key in sums.keys.sorted() {
            let sum = sums[key]!
            records.append([
                times.cell(key.period, format: format), .string(key.type.name), .integer(Int64(sum.count)),
                .number(sum.duration / 6e7), .number(sum.kilometres), .number(sum.kilocalories),
            ])
        }
        return records
    }

    /// The unit distances are printed in.
    // swift-format-ignore: NeverUseForceTry
    static let kilometres = try! HealthUnit(parsing: "km")

    /// Microseconds as minutes (the double nearest the exact quotient: 21.3997 for a duration written so).
    static func minutes(_ micros: Int64) -> Double { Double(micros) / 6e7 }

    /// A total in `unit`, or null when absent: the value as written when written in `unit` (3.40897998046875 km),
    /// else converted once.
    static func cell(_ total: WorkoutTotal?, _ unit: HealthUnit) -> JSONValue {
        guard let value = total?.value(in: unit) else { return .null }
        return .number(value)
    }
}
