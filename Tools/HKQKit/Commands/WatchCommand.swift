import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkq watch TYPE`: follows changes as they happen (an anchored subscription, one line per change), or with
/// `--collection` a live statistics collection that prints the buckets each change touched.
public struct WatchCommand: Command {
    /// A watch command.
    public init() {}

    /// `watch <type>` with `--anchor`, `--count`, and for collections `--collection --interval --tz --options`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "watch", abstract: "Follow changes live: one line per change, or buckets as they change.",
            discussion: """
                Without --collection: every sample added or deleted after --anchor (default 0: everything so \
                far, then live), one line each, in arrival order; the connection is resumed from the last \
                anchor after a reconnect. With --collection: all buckets first, then each bucket a change \
                touched, recomputed (pro-rated and merged across sources) — a line per bucket, "-" when it \
                has no data any more. Stops after --count updates, or on Ctrl-C.
                Example: hkq watch stepCount --collection --interval 1d --tz Europe/Berlin
                """,
            arguments: [ArgumentSpec("type", help: "The quantity type, e.g. stepCount.")],
            options: [
                .option("anchor", value: "n", help: "Start after this anchor (see 'hkq changes'; default: 0)."),
                .option("count", value: "n", help: "Stop after n changes (buckets with --collection); 0: never."),
                .flag("collection", help: "Watch statistics per calendar bucket instead of samples."),
                .option("interval", value: "interval", help: "With --collection: bucket length (default: 1d)."),
                .option("tz", value: "zone", help: "Time zone of buckets and printed times (default: this machine's)."),
                .option("options", value: "list", help: "With --collection: figures, as for 'hkq collection'."),
                .option("unit", value: "unit", help: "Unit of values (default: the type's canonical unit)."),
            ])
    }

    /// Subscribes and prints until `--count` is reached or the stream ends.
    public func run(_ context: CommandContext) async throws {
        let type = try QuantityType.named(context.argument(0)!)
        let zone = try QueryScope.timeZone(context)
        let count = try context.integer(option: "count") ?? 0
        let anchor = try context.integer(option: "anchor") ?? 0
        if count < 0 || anchor < 0 { throw context.usageError("--count and --anchor take 0 or more") }
        let unit = context.arguments.value("unit") ?? ""
        let subject = context.globals.subject
        if context.arguments.flag("collection") {
            let interval: CalendarInterval
            do {
                interval = try CalendarInterval(parsing: context.arguments.value("interval") ?? "1d")
            } catch let error as HealthError {
                throw context.usageError(error.message)
            }
            let options = try CollectionCommand.parseOptions(
                context.arguments.value("options"), type: type, context: context)
            let dates = DateArgumentParser(timeZone: zone, now: context.program.clock())
            let query = CollectionQuery(
                subject: subject, type: type.identifier, options: options,
                anchor: dates.parse(interval.unit == .week ? "2000-01-03" : "2000-01-01")!, interval: interval,
                timeZone: zone.identifier, unit: unit)
            try await ServerSession.run(context) { client in
                try await WatchCommand.followCollection(
                    client.subscribe(.collection(query)), options: options, times: context.times(in: zone),
                    interval: interval, count: count, context: context)
            }
        } else {
            let stream = ChangeStream(type: type, times: context.times(in: zone), format: context.globals.format)
            let query = ChangesQuery(subject: subject, type: type.identifier, anchor: UInt64(anchor), unit: unit)
            try await ServerSession.run(context) { client in
                var printed = 0
                if let header = stream.header { context.print(header) }
                for try await event in client.subscribe(.anchoredChanges(query)) {
                    guard let changes = WatchCommand.update(event, context: context) else { continue }
                    for line in try stream.lines(changes) {
                        context.print(line.text)
                        guard line.isChange else { continue }
                        printed += 1
                        if count > 0, printed >= count { return }
                    }
                }
            }
        }
    }

    /// The update an event carries; a lost connection and the reconnect are reported on stderr instead.
    static func update<Element>(_ event: SubscriptionEvent<Element>, context: CommandContext) -> Element? {
        switch event {
        case .update(let element):
            return element
        case .disconnected(let error):
            context.console.printError("hkq: connection lost (\(error.message)); reconnecting")
        case .reconnected(let reconnection):
            let seconds =
                Double(reconnection.downtime.components.seconds)
                + Double(reconnection.downtime.components.attoseconds) / 1e18
            context.console.printError(
                "hkq: reconnected after \(NumberFormat.display((seconds * 10).rounded() / 10)) s "
                    + "(\(HumanFormat.count(reconnection.attempts, "attempt"))); resuming")
        }
        return nil
    }

    /// Prints each update's buckets (all of them first): in tables `label figure unit` ("-" for a bucket now
    /// empty), in JSON one object per line `{"kind":"bucket","start",…}` (the shape of a `collection` bucket),
    /// in CSV a header then a `bucket` row each.
    static func followCollection(
        _ events: AsyncThrowingStream<SubscriptionEvent<LiveCollectionUpdate>, any Error>, options: StatisticsOptions,
        times: TimestampFormatter, interval: CalendarInterval, count: Int, context: CommandContext
    ) async throws {
        var table = LiveCollectionTable()
        var printed = 0
        let format = context.globals.format
        func report(_ update: LiveCollectionUpdate) -> CollectionReport {
            CollectionReport(
                result: CollectionResult(unit: update.unit, buckets: update.buckets), options: options, times: times,
                format: format, subDay: interval.isShorterThanADay)
        }
        var headerPrinted = false
        for try await event in events {
            guard let update = WatchCommand.update(event, context: context) else { continue }
            table.apply(update)
            let report = report(update)
            if format == .csv, !headerPrinted {
                context.print(CSV.joined(["kind"] + report.records.columns.map(\.key)))
                headerPrinted = true
            }
            let records = format == .csv ? report.records : RecordSet(columns: [])
            var objects = BucketJSONWriter(report, fields: nil)
            var csvRow = 0
            for bucket in update.buckets {
                switch format {
                case .json:
                    var json = JSONWriter(capacity: 160)
                    objects.write(bucket, to: &json, kind: "bucket")
                    // A line of its own: the next start cannot be copied from this buffer.
                    objects.flushed()
                    context.print(json.text)
                case .csv:
                    // The bucket's merged row, then (with by-source) its sources' rows.
                    let rows = 1 + (options.contains(.separateBySource) ? bucket.bySource.count : 0)
                    for row in records.rows[csvRow..<csvRow + rows] {
                        context.print(CSV.joined(["bucket"] + row.map(\.plainText)))
                    }
                    csvRow += rows
                case .table, .chart:
                    let figure = FigureColumn.headline(bucket.figures)
                    context.print(
                        "\(report.label(bucket.start)) \(figure.map(NumberFormat.rounded) ?? "-") \(update.unit)")
                }
                printed += 1
                if count > 0, printed >= count { return }
            }
        }
    }
}

/// The lines `hkq watch` prints for anchored changes, in one output format.
///
/// Tables: `+ start end value unit source uuid` per added sample, `- uuid` per deletion, then `anchor N`.
/// JSON (NDJSON): one object per change, `{"kind":"added",…sample…,"anchor":N}` or
/// `{"kind":"deleted","type","uuid","anchor":N}`. CSV: a ``header`` once, then one row per change.
struct ChangeStream {
    /// One printed line; `isChange` is false for the table's `anchor N` lines (not counted by `--count`).
    struct Line {
        var text: String
        var isChange: Bool
    }

    let type: QuantityType
    let times: TimestampFormatter
    let format: OutputFormat

    /// The CSV columns (`kind`, the sample columns, `anchor`).
    static let csvColumns = ["kind", "type", "start", "end", "value", "unit", "source", "uuid", "anchor"]

    /// The CSV header line; `nil` for other formats.
    var header: String? { format == .csv ? CSV.joined(Self.csvColumns) : nil }

    /// The lines for one batch of changes.
    func lines(_ changes: ChangesResult) throws -> [Line] {
        let added = SamplesCommand.records(try changes.added.samples(), times: times, format: format)
        let deleted = ChangesCommand.deletedRecords(changes, type: type)
        let anchor = JSONValue.integer(Int64(changes.anchor))
        var lines: [Line] = []
        switch format {
        case .json:
            for row in added.rows.indices {
                guard case .object(let pairs) = added.jsonObject(row: row) else { continue }
                lines.append(
                    Line(
                        text: JSONValue.object([("kind", "added")] + pairs + [("anchor", anchor)]).rendered,
                        isChange: true))
            }
            for row in deleted.rows.indices {
                guard case .object(let pairs) = deleted.jsonObject(row: row) else { continue }
                lines.append(
                    Line(
                        text: JSONValue.object([("kind", "deleted")] + pairs + [("anchor", anchor)]).rendered,
                        isChange: true))
            }
        case .csv:
            for row in added.rows {
                lines.append(
                    Line(text: CSV.joined(["added"] + row.map(\.plainText) + [anchor.plainText]), isChange: true))
            }
            for row in deleted.rows {
                let cells = ["deleted", row[0].plainText, "", "", "", "", "", row[1].plainText, anchor.plainText]
                lines.append(Line(text: CSV.joined(cells), isChange: true))
            }
        case .table, .chart:
            for row in added.rows {
                let cells = row.map(\.plainText)
                lines.append(Line(text: "+ " + cells[1...].joined(separator: " "), isChange: true))
            }
            for row in deleted.rows { lines.append(Line(text: "- \(row[1].plainText)", isChange: true)) }
            if !lines.isEmpty { lines.append(Line(text: "anchor \(changes.anchor)", isChange: false)) }
        }
        return lines
    }
}
