import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkq sleep`: sleep per night (HEALTHKIT.md §12) — time in bed, asleep, awake and per stage — from a collection
/// of `sleepAnalysis` anchored at a local time, so that a night is one bucket, labelled by the date it ends on.
public struct SleepCommand: Command {
    /// A sleep command.
    public init() {}

    /// `sleep [--tz …] [--from …] [--to …] [--anchor HH:MM]` and the predicate options.
    public var spec: CommandSpec {
        CommandSpec(
            name: "sleep", abstract: "Sleep per night: in bed, asleep, awake and per stage (sleepAnalysis).",
            discussion: """
                A night runs from --anchor (default 18:00) local time to --anchor the next day in --tz, and is \
                named by the date it ends on; nights with DST changes are 23 or 25 hours long. --from, --to and \
                --through are dates: the nights ending on --from up to the one before --to (or through the one \
                ending on --through) are listed, empty ones included (default: the last 7 nights). Every source's samples are merged by priority (see 'hkq sources \
                sleepAnalysis'): in each stretch of time the highest-priority source with a sample there counts, \
                and within it the stage (or awake) wins over in bed, so an iPhone's in-bed interval, a Watch's \
                stages and another app's sleep never add up to more than the night. inBed is the time covered by \
                any sleep sample; asleep adds up asleepUnspecified, asleepCore, asleepDeep and asleepREM. \
                Durations print as 7h 05m in tables and as seconds in JSON and CSV; --format chart draws the \
                hours asleep per night.
                Example: hkq sleep --tz Europe/Berlin --from 2021-01-01 --to 2021-01-08
                """,
            options: [
                .option("tz", value: "zone", help: "IANA time zone of the nights (default: this machine's)."),
                .option("from", value: "date", help: "The first night: the one ending on this date."),
                .option("to", value: "date", help: "The night after the last: the one ending on this date."),
                RangeEnd.throughSpec("The last night: the one ending on this date."),
                .option("anchor", value: "HH:MM", help: "Local time at which one night ends and the next starts."),
            ] + QueryScope.predicateSpecs, drawsChart: true, selectsFields: true, printsJSONLines: true)
    }

    /// The sleep values, in output order, with their keys and titles.
    static let stages: [(key: String, title: String, value: Int)] = [
        ("awake", "AWAKE", 2), ("asleepCore", "CORE", 3), ("asleepDeep", "DEEP", 4), ("asleepREM", "REM", 5),
        ("asleepUnspecified", "UNSPECIFIED", 1), ("inBedOnly", "IN BED ONLY", 0),
    ]
    /// The raw values that count as asleep.
    static let asleepValues = [1, 3, 4, 5]

    /// Queries the nights and prints one row per night.
    public func run(_ context: CommandContext) async throws {
        let type = try QuantityType.named("sleepAnalysis")
        let zone = try QueryScope.timeZone(context)
        let dates = DateArgumentParser(timeZone: zone, now: context.program.clock())
        let times = context.times(in: zone)
        let (hour, minute) = try Self.anchorTime(context.arguments.value("anchor") ?? "18:00", context: context)
        func date(_ text: String?, _ name: String, default fallback: Timestamp) throws -> CivilTime {
            guard let text else { return times.civil(fallback) }
            guard let value = dates.parse(text) else {
                throw context.usageError(
                    "invalid date '\(text)' for '--\(name)'; expected \(DateArgumentParser.expected)")
            }
            return times.civil(value)
        }
        let today = dates.parse("today")!
        let end = try RangeEnd.parse(context)
        let named = try date(end?.text, end?.option ?? "to", default: dates.parse("tomorrow")!)
        // The night after the last one listed.
        let last = end?.inclusive == true ? times.civil(Self.shift(named, days: 1, dates: dates)) : named
        let first = try date(
            context.arguments.value("from"), "from", default: Self.shift(times.civil(today), days: -6, dates: dates))
        func nightStart(_ day: CivilTime, shift days: Int) -> Timestamp {
            let shifted = Self.shifted(day, days: days)
            return dates.parse(
                String(format: "%04d-%02d-%02dT%02d:%02d", shifted.year, shifted.month, shifted.day, hour, minute))!
        }
        let from = nightStart(first, shift: -1)
        let to = nightStart(last, shift: -1) - 1
        if to < from {
            let message =
                end?.inclusive == true ? "--through must not be before --from" : "--to must be a later date than --from"
            throw context.usageError(message)
        }
        let filter = try QueryScope.filter(
            QueryScope.filter(context, from: nil, to: nil, timeZone: zone), values: context, for: type)
        let query = CollectionQuery(
            subject: context.globals.subject, type: type.identifier, filter: filter,
            options: [.duration, .separateByValue], anchor: from, interval: CalendarInterval(1, .day),
            timeZone: zone.identifier, enumerateFrom: from, enumerateTo: to)
        let result = try await ServerSession.run(context) { client in try await client.collection(query) }
        let format = context.globals.format
        if format == .chart {
            context.console.printBlock(Self.chart(result.buckets, times: times, width: context.chartWidth))
            return
        }
        try context.print(Self.records(result.buckets, times: times, format: format))
    }

    /// One line per night: its date, a bar of the hours asleep scaled to the longest night, and the hours
    /// (`-` for a night without samples); lines are at most `width` columns.
    static func chart(_ nights: [Statistics], times: TimestampFormatter, width: Int) -> String {
        let hours = nights.map { night -> Double? in
            guard night.figures.durationByValue != nil else { return nil }
            return Double(asleepValues.reduce(Int64(0)) { $0 + night.figures.duration(ofValue: $1) }) / 3.6e9
        }
        let texts = hours.map { $0.map { String(format: "%.1f", $0) } ?? "-" }
        let valueWidth = texts.map(\.count).max() ?? 1
        let barWidth = max(10, width - 10 - valueWidth - 2)
        let largest = hours.compactMap { $0 }.max() ?? 0
        var lines = ["hours asleep, \(HumanFormat.count(nights.count, "night"))"]
        for (index, night) in nights.enumerated() {
            let civil = times.civil(night.end)
            let label = String(format: "%04d-%02d-%02d", civil.year, civil.month, civil.day)
            let bar = CollectionReport.bar(hours[index] ?? 0, of: largest, width: barWidth)
            let padded = bar + String(repeating: " ", count: barWidth - bar.count)
            lines.append(
                "\(label) \(padded) " + String(repeating: " ", count: valueWidth - texts[index].count) + texts[index])
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One record per night: night (the date it ends on), start and end (JSON and CSV only), inBed, asleep, then
    /// each value's time; a night without samples has no figures.
    static func records(_ nights: [Statistics], times: TimestampFormatter, format: OutputFormat) -> RecordSet {
        func duration(_ micros: Int64?) -> JSONValue {
            guard let micros else { return .null }
            return format == .table || format == .chart
                ? .string(HumanFormat.duration(micros: micros)) : .number(Double(micros) / 1e6)
        }
        var records = RecordSet(
            columns: [
                .init("night", title: "NIGHT"), .init("start", title: "START", inTable: false),
                .init("end", title: "END", inTable: false), .init("inBed", title: "IN BED"),
                .init("asleep", title: "ASLEEP"),
            ] + stages.map { RecordSet.Column($0.key, title: $0.title) })
        for night in nights {
            let civil = times.civil(night.end)
            let label = String(format: "%04d-%02d-%02d", civil.year, civil.month, civil.day)
            let figures = night.figures
            let hasData = figures.durationByValue != nil
            let asleep = asleepValues.reduce(Int64(0)) { $0 + figures.duration(ofValue: $1) }
            records.append(
                [
                    .string(label), times.cell(night.start, format: format), times.cell(night.end, format: format),
                    duration(hasData ? figures.duration ?? 0 : nil), duration(hasData ? asleep : nil),
                ] + stages.map { duration(hasData ? figures.duration(ofValue: $0.value) : nil) })
        }
        return records
    }

    /// `HH:MM` as hour and minute; anything else is a usage error.
    static func anchorTime(_ text: String, context: CommandContext) throws -> (Int, Int) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]), (0..<24).contains(hour),
            (0..<60).contains(minute)
        else { throw context.usageError("invalid time '\(text)' for '--anchor'; expected HH:MM such as 18:00") }
        return (hour, minute)
    }

    /// The civil date `days` after `day`'s date (the time of day is dropped).
    static func shifted(_ day: CivilTime, days: Int) -> (year: Int, month: Int, day: Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.gmt
        let date = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day + days))!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return (parts.year!, parts.month!, parts.day!)
    }

    /// Local midnight `days` after `day`.
    static func shift(_ day: CivilTime, days: Int, dates: DateArgumentParser) -> Timestamp {
        let shifted = shifted(day, days: days)
        return dates.parse(String(format: "%04d-%02d-%02d", shifted.year, shifted.month, shifted.day))!
    }
}
