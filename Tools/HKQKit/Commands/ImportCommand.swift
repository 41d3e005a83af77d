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
            abstract: "Store the data of an Apple Health export (export.zip or export.xml).",
            discussion: """
                Reads the Health app's "Export All Health Data" zip (or the export.xml inside it) as a stream, so \
                memory stays flat whatever the file size, and sends its quantity records in batches of up to \
                10,000 rows, \(ImportCommand.maxInFlight) batches in flight, category records too. Workouts are \
                kept with their metadata, events and statistics, and their routes with every point: the GPX \
                files under workout-routes/ (in the zip, or beside an unpacked export.xml) and older exports' \
                inline <Location>s; a missing or malformed route file, or one with a point the server would \
                refuse, is a rejection. Correlations (blood pressure, food) are kept naming their member samples; \
                characteristics and activity summaries too.

                Each element is named by its whole content (every attribute and everything inside it, instants \
                as instants, a device without its object address, a value in any unit), so importing the same \
                file again adds nothing, identical elements are one, and elements that differ in anything (a run \
                a companion app synced twice, with another creation date) are all kept, as HealthKit keeps them. \
                Values are sent as printed with 6 digits, so a re-export in other display units (km after mi, kJ \
                after kcal), which Apple rounds again, matches the stored samples within that rounding and adds \
                nothing either (Protocol/STORAGE.md, "Content identity"). Objects an earlier release stored under \
                its content identity are renamed, not doubled.

                Elements and attributes it does not keep are counted as skipped, by name; an element that cannot \
                be stored (malformed, or refused by the server) is named with its reason and line, and the \
                import goes on. Exit status: 0 when every element was stored or already stored, \
                \(ExitStatus.partialImport.rawValue) when some were rejected (the summary says which), \
                \(ExitStatus.badInput.rawValue) when the file cannot be read on, \
                \(ExitStatus.unavailable.rawValue) when the server is gone. A progress bar is drawn on standard error when it is a terminal; the summary \
                goes to standard output (--format json for one object).
                """,
            arguments: [ArgumentSpec("file", help: "The export: export.zip or export.xml.")],
            options: [.flag("dry-run", help: "Read and summarise the file without sending anything.")])
    }

    /// An element the server refused: its kind (`Workout`), the reason that groups it and the message naming it.
    struct Refusal: Sendable {
        var element: String
        var reason: String
        var detail: String
    }

    /// What storing one kind of object came to: the server's acknowledgements, the objects it refused, and how
    /// many objects stored under an earlier release's identity the imported ones replaced.
    struct Stored: Sendable {
        var counts = PipelinedUpload.Counts()
        var refused: [Refusal] = []
        var replaced = 0
    }

    /// Sends `workouts` in requests of at most ``WorkoutInsert/maxWorkouts``, replacing the workouts an earlier
    /// release stored under their content identity (``sendReplacing(_:element:per:name:stored:delete:insert:)``).
    static func send(_ workouts: [Workout], client: HealthClient, subject: String) async throws -> Stored {
        try await sendReplacing(
            workouts, element: "Workout", per: WorkoutInsert.maxWorkouts,
            name: { "\($0.activityType) workout at \($0.start) µs" },
            stored: {
                try await client.workouts(subject: subject, filter: WorkoutFilter(uuids: $0)).workouts.map(\.workout)
            },
            delete: { try await client.deleteWorkouts($0, subject: subject) }
        ) { chunk in
            let ack = try await client.insertWorkouts(chunk, subject: subject)
            return PipelinedUpload.Counts(inserted: Int(ack.inserted), duplicates: Int(ack.duplicates))
        }
    }

    /// Sends `correlations` in requests of at most ``CorrelationInsert/maxCorrelations``, replacing the
    /// correlations an earlier release stored under their content identity.
    static func send(_ correlations: [Correlation], client: HealthClient, subject: String) async throws -> Stored {
        try await sendReplacing(
            correlations, element: "Correlation", per: CorrelationInsert.maxCorrelations,
            name: { "\($0.type.rawValue) correlation at \($0.start) µs" },
            stored: {
                try await client.correlations(subject: subject, filter: CorrelationFilter(uuids: $0)).correlations
                    .map(\.correlation)
            },
            delete: { try await client.deleteCorrelations($0, subject: subject) }
        ) { chunk in
            let ack = try await client.insertCorrelations(chunk, subject: subject)
            return PipelinedUpload.Counts(inserted: Int(ack.inserted), duplicates: Int(ack.duplicates))
        }
    }

    /// Sends `objects` as ``send(_:element:per:name:_:)`` does, then deletes the objects an earlier release
    /// stored under the content identity of one of them (``legacyNamed(_:among:)``), asking `stored` only for those
    /// UUIDs. An identity that may not read them (no read grant) has none to replace.
    private static func sendReplacing<Object: ContentNamedObject>(
        _ objects: [Object], element: String, per: Int, name: (Object) -> String,
        stored: (Set<UUID>) async throws -> [Object], delete: ([UUID]) async throws -> UInt64,
        insert: ([Object]) async throws -> PipelinedUpload.Counts
    ) async throws -> Stored {
        guard !objects.isEmpty else { return Stored() }
        let earlier = (try? await stored(Set(objects.map(\.contentID)))) ?? []
        var result = try await send(objects, element: element, per: per, name: name, insert)
        let replaced = legacyNamed(objects, among: earlier)
        if !replaced.isEmpty { result.replaced = Int(try await delete(replaced)) }
        return result
    }

    /// Sends `routes` (at most ``RouteInsert/maxRoutes`` a request); a route the server refuses is listed.
    static func send(_ routes: [WorkoutRoute], client: HealthClient, subject: String) async throws -> Stored {
        try await send(
            routes, element: "WorkoutRoute", per: RouteInsert.maxRoutes,
            name: { ($0.path.isEmpty ? "inline route" : "route \($0.path)") + " of workout \($0.workout)" }
        ) { chunk in
            let ack = try await client.insertRoutes(chunk, subject: subject)
            return PipelinedUpload.Counts(inserted: Int(ack.inserted), duplicates: Int(ack.duplicates))
        }
    }

    /// Sends `summaries` in requests of at most ``ActivitySummaryInsert/maxSummaries``; counts days changed as
    /// inserted and days stored already as sent as duplicates.
    static func send(_ summaries: [ActivitySummary], client: HealthClient, subject: String) async throws -> Stored {
        try await send(
            summaries, element: "ActivitySummary", per: ActivitySummaryInsert.maxSummaries,
            name: { "activity summary \($0.dayText)" }
        ) { chunk in
            let ack = try await client.insertActivitySummaries(chunk, subject: subject)
            return PipelinedUpload.Counts(inserted: Int(ack.changed), duplicates: Int(ack.unchanged))
        }
    }

    /// Sends `objects` (export elements `element`) through `insert` at most `per` a request
    /// (``RefusalIsolation``), listing each the server refuses by `name` with its message.
    private static func send<Object>(
        _ objects: [Object], element: String, per: Int, name: (Object) -> String,
        _ insert: ([Object]) async throws -> PipelinedUpload.Counts
    ) async throws -> Stored {
        var stored = Stored()
        stored.counts = try await RefusalIsolation.send(objects, per: per, insert) { object, error in
            stored.refused.append(
                Refusal(
                    element: element, reason: "refused by the server (\(error.code.name))",
                    detail: "\(name(object)): \(error.message)"))
        }
        return stored
    }

    /// The UUIDs of `stored` objects named by their content identity alone (``Workout/contentID``: source name,
    /// type, start and end, how releases before element identities named imported objects) that `imported`
    /// objects, named by their whole element, replace: each imported object in export order takes over the first
    /// such object with its content identity not taken yet.
    static func legacyNamed<Object: ContentNamedObject>(_ imported: [Object], among stored: [Object]) -> [UUID] {
        var legacy: [UUID: [UUID]] = [:]
        for object in stored where object.uuid == object.contentID {
            legacy[object.contentID, default: []].append(object.uuid)
        }
        guard !legacy.isEmpty else { return [] }
        var replaced: [UUID] = []
        for object in imported where object.uuid != object.contentID {
            guard var candidates = legacy[object.contentID], !candidates.isEmpty else { continue }
            replaced.append(candidates.removeFirst())
            legacy[object.contentID] = candidates
        }
        return replaced
    }

    /// What storing the objects of an export came to, per kind; `nil` for a kind the export has none of.
    struct StoredObjects: Sendable {
        var workouts: Stored?
        var summaries: Stored?
        var correlations: Stored?
        var routes: Stored?

        /// The server's refusal of the characteristics of `<Me>`, if it refused them.
        var characteristics: HealthClientError?

        /// Every object the server refused.
        var refusals: [Refusal] {
            let me = characteristics.map {
                Refusal(element: "Me", reason: "refused by the server (\($0.code.name))", detail: $0.message)
            }
            return [workouts, summaries, correlations, routes].flatMap { $0?.refused ?? [] } + (me.map { [$0] } ?? [])
        }

        /// Objects stored under an earlier release's identity that imported ones replaced.
        var replaced: Int { (workouts?.replaced ?? 0) + (correlations?.replaced ?? 0) }
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
        var summary: ImportSummary
        var stored: [String: PipelinedUpload.Counts]?
        var objects = StoredObjects()
        defer { bar?.clear() }
        if context.arguments.flag("dry-run") {
            summary = try importer.run(progress: bar.map { bar in { bar.update($0) } }) { _ in }
        } else {
            (summary, stored, objects) = try await ServerSession.run(context) { client in
                var upload = PipelinedUpload(client: client, maxInFlight: ImportCommand.maxInFlight)
                do {
                    var objects = StoredObjects()
                    var summary = try await importer.run(
                        progress: bar.map { bar in { bar.update($0) } }, sink: { try await upload.send($0) },
                        workouts: {
                            objects.workouts = try await ImportCommand.send($0, client: client, subject: subject)
                        },
                        characteristics: { characteristics in
                            do {
                                try await client.setCharacteristics(characteristics, subject: subject)
                            } catch let error as HealthClientError where RefusalIsolation.refusesContent(error) {
                                objects.characteristics = error
                            }
                        },
                        activitySummaries: {
                            objects.summaries = try await ImportCommand.send($0, client: client, subject: subject)
                        },
                        correlations: {
                            objects.correlations = try await ImportCommand.send($0, client: client, subject: subject)
                        },
                        routes: { objects.routes = try await ImportCommand.send($0, client: client, subject: subject) })
                    try await upload.finish()
                    for row in upload.refused {
                        summary.rejectStored(
                            element: "Record", reason: "refused by the server (\(row.error.code.name))",
                            detail: "\(row.type) of \(row.source) at \(row.start) µs: \(row.error.message)", line: nil)
                    }
                    for refusal in objects.refusals {
                        summary.rejectStored(
                            element: refusal.element, reason: refusal.reason, detail: refusal.detail, line: nil)
                    }
                    return (summary, upload.counts, objects)
                } catch {
                    await upload.abandon()
                    throw error
                }
            }
        }
        bar?.clear()
        let report = ImportReport(
            file: path, summary: summary, stored: stored, storedWorkouts: objects.workouts?.counts,
            storedSummaries: objects.summaries?.counts, storedCorrelations: objects.correlations?.counts,
            storedRoutes: objects.routes?.counts, replaced: objects.replaced, seconds: clock() - started)
        context.console.printBlock(report.rendered(as: context.globals.format))
        if summary.rejectedCount > 0 { throw CommandExit(.partialImport) }
    }
}

/// An object with a content identity apart from its UUID (``ImportCommand/legacyNamed(_:among:)``).
protocol ContentNamedObject {
    var uuid: UUID { get }
    /// The identity of its source, type, start and end.
    var contentID: UUID { get }
}

extension Workout: ContentNamedObject {}
extension Correlation: ContentNamedObject {}
