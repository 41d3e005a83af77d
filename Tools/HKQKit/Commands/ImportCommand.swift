import Foundation
import HealthClient
import HealthImport
import HealthModel
import HealthWire

/// `hkq import FILE`: reads an Apple Health export (export.zip or export.xml) as a stream and stores its quantity
/// samples, with several batches in flight, a progress bar on a terminal and a closing summary.
public struct ImportCommand: Command {
    /// Batches sent and not yet acknowledged, at most: enough to keep parsing, sending and storing busy at
    /// once, while the memory held stays bounded (each batch is at most 10,000 rows).
    public static let maxInFlight = 4
    /// Compressed bytes read between two progress callbacks (the bar itself redraws at most ten times a second).
    public static let progressInterval: Int64 = 64 << 10

    /// Whether to draw the progress bar; by default when standard error is a terminal.
    public var showsProgress: @Sendable () -> Bool
    /// Seconds on a monotonic clock, for the progress bar and the elapsed time.
    public var clock: @Sendable () -> Double

    /// An import command; tests pass their own terminal test and clock.
    public init(
        showsProgress: @escaping @Sendable () -> Bool = { isatty(2) == 1 },
        clock: @escaping @Sendable () -> Double = ImportCommand.monotonicSeconds
    ) {
        self.showsProgress = showsProgress
        self.clock = clock
    }

    /// Seconds since an arbitrary fixed point, from the monotonic clock.
    public static let monotonicSeconds: @Sendable () -> Double = {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// `import <file>` with `--dry-run`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "import",
            abstract: "Store the quantity samples of an Apple Health export (export.zip or export.xml).",
            discussion: """
                Reads the Health app's "Export All Health Data" zip (or the export.xml inside it) as a stream, so \
                memory stays flat whatever the file size, and sends its quantity records in batches of up to \
                10,000 rows, \(ImportCommand.maxInFlight) batches in flight, category records too. Workouts are \
                kept with their metadata, events and statistics (after the samples, named by source, activity \
                type, start and end, so a second import adds none), and their routes with every point: the GPX \
                files under workout-routes/ (in the zip, or beside an unpacked export.xml) and older exports' \
                inline <Location>s; a missing or malformed route file, or one with a point the server would \
                refuse, is a rejection, and so is a route the server refuses. Correlations (blood pressure, food) \
                are kept naming their member samples. Activity summaries and other elements are counted as \
                skipped; a malformed record is reported with its line number and skipped, and so is an element \
                with more children than the protocol carries (a workout with over 4,096 events, 128 metadata \
                entries): nothing is stored in part.

                Sample UUIDs are derived from each record's content (source, type, start, end, and the value in \
                the type's canonical unit to 9 digits), so importing the same file again adds nothing: the summary \
                counts those samples as already stored. Values are sent as printed with 6 digits, so a re-export \
                in other display units (km after mi, kJ after kcal), which Apple rounds again, matches the stored \
                samples of the same source and interval within that rounding and adds nothing either \
                (Protocol/STORAGE.md, "Content identity"). A progress bar is drawn on standard \
                error when it is a terminal; the summary goes to standard output (--format json for one object).
                """,
            arguments: [ArgumentSpec("file", help: "The export: export.zip or export.xml.")],
            options: [.flag("dry-run", help: "Read and summarise the file without sending anything.")])
    }

    /// Sends `workouts` in requests of at most ``WorkoutInsert/maxWorkouts``; returns what the server acknowledged.
    static func send(_ workouts: [Workout], client: HealthClient, subject: String) async throws
        -> PipelinedUpload.Counts
    {
        try await send(workouts, per: WorkoutInsert.maxWorkouts) { chunk in
            let ack = try await client.insertWorkouts(chunk, subject: subject)
            return (ack.inserted, ack.duplicates)
        }
    }

    /// Sends `correlations` in requests of at most ``CorrelationInsert/maxCorrelations``; returns what the
    /// server acknowledged.
    static func send(_ correlations: [Correlation], client: HealthClient, subject: String) async throws
        -> PipelinedUpload.Counts
    {
        try await send(correlations, per: CorrelationInsert.maxCorrelations) { chunk in
            let ack = try await client.insertCorrelations(chunk, subject: subject)
            return (ack.inserted, ack.duplicates)
        }
    }

    /// Sends `routes` in requests of at most ``RouteInsert/maxRoutes``; returns what the server acknowledged and
    /// the routes it refused. A request refused for one of its routes (``ErrorCode/invalidSample``: a rule the
    /// reader did not check; ``ErrorCode/uuidConflict``: a route stored before with other points) is sent again
    /// route by route, so that route alone is refused and the others are stored. Other errors end the import.
    static func send(_ routes: [WorkoutRoute], client: HealthClient, subject: String) async throws
        -> (counts: PipelinedUpload.Counts, refused: [(route: WorkoutRoute, error: HealthClientError)])
    {
        var counts = PipelinedUpload.Counts()
        var refused: [(route: WorkoutRoute, error: HealthClientError)] = []
        func refusesOne(_ error: HealthClientError) -> Bool {
            error.origin == .server && (error.code == .invalidSample || error.code == .uuidConflict)
        }
        var start = 0
        while start < routes.count {
            let end = min(start + RouteInsert.maxRoutes, routes.count)
            let chunk = Array(routes[start..<end])
            start = end
            do {
                let ack = try await client.insertRoutes(chunk, subject: subject)
                counts.inserted += Int(ack.inserted)
                counts.duplicates += Int(ack.duplicates)
                continue
            } catch {
                guard refusesOne(error) else { throw error }
            }
            for route in chunk {
                do {
                    let ack = try await client.insertRoutes([route], subject: subject)
                    counts.inserted += Int(ack.inserted)
                    counts.duplicates += Int(ack.duplicates)
                } catch {
                    guard refusesOne(error) else { throw error }
                    refused.append((route, error))
                }
            }
        }
        return (counts, refused)
    }

    /// Counts each route the server refused as a rejection in `summary`, naming its file (or the workout's
    /// inline route) and the server's reason.
    static func note(refused: [(route: WorkoutRoute, error: HealthClientError)], in summary: inout ImportSummary) {
        for (route, error) in refused {
            let file = route.path.isEmpty ? "inline route" : "route file \"\(route.path.prefix(80))\""
            summary.rejectRoute(
                reason: "route refused by the server (\(error.code.name))", message: "\(file): \(error.message)")
        }
    }

    /// Sends `objects` with `insert`, at most `per` in one request; sums what it acknowledged.
    private static func send<Object>(
        _ objects: [Object], per: Int, _ insert: ([Object]) async throws -> (UInt64, UInt64)
    ) async throws -> PipelinedUpload.Counts {
        var counts = PipelinedUpload.Counts()
        var start = 0
        while start < objects.count {
            let end = min(start + per, objects.count)
            let (inserted, duplicates) = try await insert(Array(objects[start..<end]))
            counts.inserted += Int(inserted)
            counts.duplicates += Int(duplicates)
            start = end
        }
        return counts
    }

    /// Sends `summaries` in requests of at most ``ActivitySummaryInsert/maxSummaries``; returns how many days
    /// changed (inserted) and how many were stored already (duplicates).
    static func send(_ summaries: [ActivitySummary], client: HealthClient, subject: String) async throws
        -> PipelinedUpload.Counts
    {
        var counts = PipelinedUpload.Counts()
        var start = 0
        while start < summaries.count {
            let end = min(start + ActivitySummaryInsert.maxSummaries, summaries.count)
            let ack = try await client.insertActivitySummaries(Array(summaries[start..<end]), subject: subject)
            counts.inserted += Int(ack.changed)
            counts.duplicates += Int(ack.unchanged)
            start = end
        }
        return counts
    }

    /// Reads the export, sends its batches (unless a dry run) and prints the summary.
    public func run(_ context: CommandContext) async throws {
        let path = context.argument(0)!
        let subject = context.globals.subject
        let importer = ExportImporter(
            path: path, subject: subject,
            options: ImportOptions(progressInterval: ImportCommand.progressInterval))
        let bar = showsProgress() ? ProgressBar(sink: context.console.err, clock: clock) : nil
        let started = clock()
        let summary: ImportSummary
        var stored: [String: PipelinedUpload.Counts]?
        var storedWorkouts: PipelinedUpload.Counts?
        var storedSummaries: PipelinedUpload.Counts?
        var storedCorrelations: PipelinedUpload.Counts?
        var storedRoutes: PipelinedUpload.Counts?
        defer { bar?.clear() }
        if context.arguments.flag("dry-run") {
            summary = try importer.run(progress: bar.map { bar in { bar.update($0) } }) { _ in }
        } else {
            (summary, stored, storedWorkouts, storedSummaries, storedCorrelations, storedRoutes) =
                try await ServerSession.run(context) { client in
                    var upload = PipelinedUpload(client: client, maxInFlight: ImportCommand.maxInFlight)
                    do {
                        var workoutCounts = PipelinedUpload.Counts()
                        var summaryCounts = PipelinedUpload.Counts()
                        var correlationCounts = PipelinedUpload.Counts()
                        var routeCounts = PipelinedUpload.Counts()
                        var refusedRoutes: [(route: WorkoutRoute, error: HealthClientError)] = []
                        var summary = try await importer.run(
                            progress: bar.map { bar in { bar.update($0) } }, sink: { try await upload.send($0) },
                            workouts: { workouts in
                                workoutCounts = try await ImportCommand.send(workouts, client: client, subject: subject)
                            },
                            characteristics: { try await client.setCharacteristics($0, subject: subject) },
                            activitySummaries: { summaries in
                                summaryCounts = try await ImportCommand.send(
                                    summaries, client: client, subject: subject)
                            },
                            correlations: { correlations in
                                correlationCounts = try await ImportCommand.send(
                                    correlations, client: client, subject: subject)
                            },
                            routes: { routes in
                                (routeCounts, refusedRoutes) = try await ImportCommand.send(
                                    routes, client: client, subject: subject)
                            })
                        ImportCommand.note(refused: refusedRoutes, in: &summary)
                        try await upload.finish()
                        return (summary, upload.counts, workoutCounts, summaryCounts, correlationCounts, routeCounts)
                    } catch {
                        await upload.abandon()
                        throw error
                    }
                }
        }
        bar?.clear()
        let report = ImportReport(
            file: path, summary: summary, stored: stored, storedWorkouts: storedWorkouts,
            storedSummaries: storedSummaries, storedCorrelations: storedCorrelations, storedRoutes: storedRoutes,
            seconds: clock() - started)
        context.console.printBlock(report.rendered(as: context.globals.format))
    }
}
