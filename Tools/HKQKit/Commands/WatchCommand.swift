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
                has no data any more. Stops after --count updates, or on Ctrl-C. When the server goes away, \
                watch says so on stderr and reconnects (backoff up to 2 s) for as long as it runs, resuming \
                where it was.
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
                    client.subscribe(.collection(query)), options: options, zone: zone,
                    interval: interval, count: count, context: context)
            }
        } else {
            let times = TimestampFormatter(timeZone: zone)
            let query = ChangesQuery(subject: subject, type: type.identifier, anchor: UInt64(anchor), unit: unit)
            try await ServerSession.run(context) { client in
                var printed = 0
                for try await event in client.subscribe(.anchoredChanges(query)) {
                    guard let changes = WatchCommand.update(event, context: context) else { continue }
                    for line in WatchCommand.lines(changes, times: times) {
                        context.print(line)
                        guard !line.hasPrefix("anchor") else { continue }
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
            let seconds = Double(reconnection.downtime.components.seconds)
                + Double(reconnection.downtime.components.attoseconds) / 1e18
            context.console.printError(
                "hkq: reconnected after \(NumberFormat.display((seconds * 10).rounded() / 10)) s "
                    + "(\(reconnection.attempts) attempts); resuming")
        }
        return nil
    }

    /// One line per change: `+ start end value unit source uuid` or `- uuid`, each ending with the anchor.
    static func lines(_ changes: ChangesResult, times: TimestampFormatter) -> [String] {
        var lines: [String] = []
        let batch = changes.added
        for row in 0..<batch.count {
            let source = batch.sources[Int(batch.sourceIndices[row])].name
            lines.append(
                "+ \(times.display(batch.starts[row])) \(times.display(batch.ends[row])) "
                    + "\(NumberFormat.display(batch.values[row])) \(batch.unit) \(source) \(batch.uuid(row: row).uuidString)"
            )
        }
        for deleted in changes.deleted { lines.append("- \(deleted.uuid.uuidString)") }
        if !lines.isEmpty { lines.append("anchor \(changes.anchor)") }
        return lines
    }

    /// Prints each update's buckets (all of them first) as `start figure unit`, "-" for a bucket now empty.
    static func followCollection(
        _ events: AsyncThrowingStream<SubscriptionEvent<LiveCollectionUpdate>, any Error>, options: StatisticsOptions, zone: TimeZone,
        interval: CalendarInterval, count: Int, context: CommandContext
    ) async throws {
        var table = LiveCollectionTable()
        var printed = 0
        let report = CollectionReport(
            result: CollectionResult(unit: "", buckets: []), options: options, zone: zone,
            showsTime: interval.unit.rawValue < CalendarInterval.Unit.day.rawValue)
        for try await event in events {
            guard let update = WatchCommand.update(event, context: context) else { continue }
            table.apply(update)
            for bucket in update.buckets {
                let figure =
                    [bucket.figures.sum, bucket.figures.average, bucket.figures.minimum, bucket.figures.maximum]
                    .compactMap { $0 }.first ?? bucket.figures.mostRecent?.value
                context.print("\(report.label(bucket.start)) \(figure.map(NumberFormat.display) ?? "-") \(update.unit)")
                printed += 1
                if count > 0, printed >= count { return }
            }
        }
    }
}
