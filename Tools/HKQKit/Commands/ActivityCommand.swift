import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkq activity [--from] [--to] [--compare]`: Apple's activity summaries of the subject (HEALTHKIT.md §13), one
/// row per day with values and goals; with `--compare`, our merged daily sums beside them.
public struct ActivityCommand: Command {
    /// An activity command.
    public init() {}

    /// `activity` with its options.
    public var spec: CommandSpec {
        CommandSpec(
            name: "activity", abstract: "List Apple's daily activity summaries (move, exercise, stand and goals).",
            discussion: """
                One row per day from --from through --through (both included; default: every day stored), or \
                up to the day before --to, as \
                imported from the export's <ActivitySummary> elements: move (active energy, in its unit), \
                exercise (minutes), stand (hours) and their goals; JSON and CSV add the move time and its goal \
                (watches in move-time mode). With --compare, our own daily figures from the stored samples, \
                merged across sources as every query is, follow each of Apple's: active energy (activeEnergyBurned, \
                in the summary's unit), exercise minutes (appleExerciseTime) and stand hours (the time covered by \
                appleStandHour samples of value stood, in hours), each day taken in --tz. Reading needs the read \
                grant for activitySummary. Example: hkq activity --from 2024-01-01 --through 2024-01-31 --compare.
                """,
            options: [
                .option("from", value: "date", help: "The first day listed."),
                RangeEnd.throughSpec("The last day listed."),
                .option(
                    "to", value: "date",
                    help: "Deprecated: the last day listed, as --through (--to elsewhere excludes its day)."),
                .option("tz", value: "zone", help: "IANA time zone of the days (default: local)."),
                .flag("compare", help: "Add our daily sums of the stored samples beside Apple's figures."),
            ], selectsFields: true)
    }

    /// The figures `--compare` adds: Apple's field, our column's key and title, the type, its statistics.
    static let comparisons: [(field: ActivitySummary.Field, key: String, title: String, type: String)] = [
        (.activeEnergyBurned, "ourActiveEnergyBurned", "OUR MOVE", "activeEnergyBurned"),
        (.appleExerciseTime, "ourAppleExerciseTime", "OUR EXERCISE", "appleExerciseTime"),
        (.appleStandHours, "ourAppleStandHours", "OUR STAND", "appleStandHour"),
    ]

    /// Queries the summaries (and with `--compare` the daily sums) and prints them.
    public func run(_ context: CommandContext) async throws {
        let zone = try QueryScope.timeZone(context)
        let dates = DateArgumentParser(timeZone: zone, now: context.program.clock())
        let times = context.times(in: zone)
        func day(_ text: String?, _ name: String) throws -> Int? {
            guard let text else { return nil }
            guard let instant = dates.parse(text) else {
                throw context.usageError(
                    "invalid date '\(text)' for '--\(name)'; expected \(DateArgumentParser.expected)")
            }
            let civil = times.civil(instant)
            return CivilCalendar.dayNumber(year: civil.year, month: civil.month, day: civil.day)
        }
        let first = try day(context.arguments.value("from"), "from")
        let end = try RangeEnd.parse(context, deprecatedInclusiveTo: "day")
        let last = try end.flatMap { try day($0.text, $0.option) }
        if let first, let last, last < first {
            throw context.usageError("--\(end!.option) must not be before --from")
        }
        let subject = context.globals.subject
        let compare = context.arguments.flag("compare")
        let (summaries, ours) = try await ServerSession.run(context) { client in
            let summaries = try await client.activitySummaries(subject: subject, from: first, through: last)
            guard compare, let low = summaries.first?.day, let high = summaries.last?.day else {
                return (summaries, [String: [Int: Double]]())
            }
            return (summaries, try await Self.dailySums(client, subject: subject, days: low...high, dates: dates))
        }
        try context.print(Self.records(summaries, ours: compare ? ours : nil))
    }

    /// Our figures per comparison key and day: one daily collection per type over `days` in the parser's zone.
    static func dailySums(
        _ client: HealthClient, subject: String, days: ClosedRange<Int>, dates: DateArgumentParser
    ) async throws -> [String: [Int: Double]] {
        func midnight(_ day: Int) -> Timestamp {
            let date = CivilCalendar.date(ofDay: day)
            return dates.local(CivilTime(year: date.year, month: date.month, day: date.day))
        }
        let from = midnight(days.lowerBound)
        let to = midnight(days.upperBound + 1)
        var result: [String: [Int: Double]] = [:]
        for comparison in comparisons {
            let isCategory = comparison.type == "appleStandHour"
            let query = CollectionQuery(
                subject: subject, type: comparison.type,
                options: isCategory ? [.duration, .separateByValue] : [.cumulativeSum], anchor: from,
                interval: CalendarInterval(1, .day), timeZone: dates.timeZone.identifier,
                unit: isCategory ? "" : comparison.field == .activeEnergyBurned ? "kcal" : "min",
                enumerateFrom: from, enumerateTo: to - 1)
            var sums: [Int: Double] = [:]
            for (index, bucket) in try await client.collection(query).buckets.enumerated() {
                let value =
                    isCategory
                    ? bucket.figures.durationByValue.map { _ in Double(bucket.figures.duration(ofValue: 0)) / 3.6e9 }
                    : bucket.figures.sum
                if let value { sums[days.lowerBound + index] = value }
            }
            result[comparison.key] = sums
        }
        return result
    }

    /// One record per summary: the day, Apple's values and goals, and with `ours` our figure after each compared
    /// value (null for a day without samples). Our energy is given in the summary's unit.
    static func records(_ summaries: [ActivitySummary], ours: [String: [Int: Double]]?) -> RecordSet {
        typealias Field = ActivitySummary.Field
        let compared = Dictionary(uniqueKeysWithValues: comparisons.map { ($0.field, $0) })
        var columns: [RecordSet.Column] = [.init("date", title: "DATE")]
        let titles: [(Field, String, Bool)] = [
            (.activeEnergyBurned, "MOVE", true), (.activeEnergyBurnedGoal, "MOVE GOAL", true),
            (.appleMoveTime, "MOVE MIN", false), (.appleMoveTimeGoal, "MOVE MIN GOAL", false),
            (.appleExerciseTime, "EXERCISE", true), (.appleExerciseTimeGoal, "EXERCISE GOAL", true),
            (.appleStandHours, "STAND", true), (.appleStandHoursGoal, "STAND GOAL", true),
        ]
        for (field, title, inTable) in titles {
            columns.append(.init(field.rawValue, title: title, inTable: inTable, roundedInTable: true))
            if ours != nil, let comparison = compared[field] {
                columns.append(.init(comparison.key, title: comparison.title, roundedInTable: true))
            }
            if field == .activeEnergyBurnedGoal { columns.append(.init("activeEnergyBurnedUnit", title: "UNIT")) }
        }
        var records = RecordSet(columns: columns)
        for summary in summaries {
            var row: [JSONValue] = [.string(summary.dayText)]
            for (field, _, _) in titles {
                row.append(summary[field].map { .number($0) } ?? .null)
                if let ours, let comparison = compared[field] {
                    row.append(
                        ours[comparison.key]?[summary.day].map { .number(ourValue($0, field, summary)) } ?? .null)
                }
                if field == .activeEnergyBurnedGoal { row.append(.string(summary.activeEnergyBurnedUnit)) }
            }
            records.append(row)
        }
        return records
    }

    /// Our figure `value` for `field`, energy converted from kilocalories to the summary's unit; every digit kept
    /// (tables round it).
    private static func ourValue(_ value: Double, _ field: ActivitySummary.Field, _ summary: ActivitySummary) -> Double
    {
        guard field == .activeEnergyBurned, !summary.activeEnergyBurnedUnit.isEmpty,
            let unit = try? HealthUnit(parsing: summary.activeEnergyBurnedUnit),
            let converted = try? ActivitySummary.energyUnit.convert(value, to: unit)
        else { return value }
        return converted
    }
}
