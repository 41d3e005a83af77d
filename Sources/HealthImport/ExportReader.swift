import Foundation
import HealthModel

/// Reads an Apple Health export (export.zip or a plain export.xml) as a stream of ``SampleBatch``es.
///
/// Pull batches with ``nextBatch()`` until it returns `nil`, then read ``summary``. Memory stays flat whatever
/// the file size: the file is read a MiB at a time, inflated 16 KB of input at a time, and only unfinished
/// batches are held. Quantity records become samples of the subject given; everything else is counted as
/// skipped, and malformed records are counted as rejected with their line. A damaged file (not an export,
/// truncated or corrupt zip, broken XML) throws a ``HealthError``. The same file always yields the same
/// batches, UUIDs and batch ids.
///
/// Threading: not thread-safe; use it from one thread or task at a time. Reading blocks on file I/O.
public final class ExportReader {
    /// The person every sample is about.
    public let subject: String
    /// The settings of this import.
    public let options: ImportOptions

    private let file: ExportFile
    private let source: ExportByteSource
    private let progressHandler: ((ImportProgress) -> Void)?
    private var parser: ExportParser

    /// Opens the export at `path` for `subject`.
    ///
    /// `progress` is called on the thread calling ``nextBatch()``, about every ``ImportOptions/progressInterval``
    /// bytes of the file and once at the end, after the last batch. Throws ``ErrorCode/invalidArgument`` when the
    /// subject is invalid, the file is missing or is not an export, ``ErrorCode/malformedPayload`` when the zip
    /// is damaged.
    public convenience init(
        path: String, subject: String, options: ImportOptions = ImportOptions(),
        progress: ((ImportProgress) -> Void)? = nil
    ) throws {
        try self.init(path: path, subject: subject, options: options, progress: progress, readAhead: false)
    }

    /// Opens the export at `path`; with `readAhead` a zip entry is inflated on a thread of its own, a few pieces
    /// ahead of the parse (``ReadAheadByteSource``).
    convenience init(
        path: String, subject: String, options: ImportOptions, progress: ((ImportProgress) -> Void)?,
        readAhead: Bool
    ) throws {
        try SampleRules.validate(subject: subject)
        try self.init(
            file: ExportFile(path: path), subject: subject, options: options, progress: progress,
            readAhead: readAhead)
    }

    /// Reads the export held in `bytes` (the contents of an export.zip or export.xml), named `name` in messages,
    /// for `subject`: the batches and errors the same bytes in a file would give (tests, fuzzing, standard input).
    /// Throws as ``init(path:subject:options:progress:)`` does.
    public convenience init(
        bytes: Data, name: String = "export.zip", subject: String, options: ImportOptions = ImportOptions(),
        progress: ((ImportProgress) -> Void)? = nil
    ) throws {
        try SampleRules.validate(subject: subject)
        try self.init(
            file: ExportFile(bytes: bytes, name: name), subject: subject, options: options, progress: progress,
            readAhead: false)
    }

    /// Opens `file` (the subject already checked).
    private init(
        file: ExportFile, subject: String, options: ImportOptions, progress: ((ImportProgress) -> Void)?,
        readAhead: Bool
    ) throws {
        self.subject = subject
        self.options = options
        self.file = file
        let opened = try ExportSourceOpener.open(file)
        source = readAhead && opened is ZipEntryByteSource ? ReadAheadByteSource(opened) : opened
        progressHandler = progress
        parser = ExportParser(subject: subject, options: options, displayName: file.displayName)
    }

    /// What the import did so far; complete once ``nextBatch()`` has returned `nil`.
    public var summary: ImportSummary { parser.summary }

    /// Where the import stands now.
    public var progress: ImportProgress { parser.report(source) }

    /// The next batch of samples, or `nil` when the export is exhausted (``summary`` is then complete).
    ///
    /// Throws a ``HealthError`` naming the file (and the line, for XML) when the export is damaged; the reader
    /// must not be used after that.
    public func nextBatch() throws -> SampleBatch? {
        try parser.nextBatch(from: source, progress: progressHandler)
    }

    /// The `<Workout>` elements read since the last call (HEALTHKIT.md §13), each with its metadata, events,
    /// statistics and route references, and its content identity as UUID. All of them are read once
    /// ``nextBatch()`` has returned `nil`.
    public func takeWorkouts() -> [Workout] {
        parser.takeWorkouts()
    }

    /// The `<ActivitySummary>` elements read since the last call (HEALTHKIT.md §13), by their order in the file,
    /// without the export day's (incomplete). All of them are read once ``nextBatch()`` has returned `nil`.
    public func takeActivitySummaries() -> [ActivitySummary] {
        parser.takeActivitySummaries()
    }

    /// The `<Correlation>` elements read since the last call (HEALTHKIT.md §13), each naming its member samples
    /// by the UUIDs their top-level records are imported with.
    public func takeCorrelations() -> [Correlation] {
        parser.takeCorrelations()
    }

    /// The routes of the workouts read since the last call (HEALTHKIT.md §13): a workout's inline `<Location>`s
    /// as one route, and each route file it names (`workout-routes/route_….gpx` inside the zip, or beside a
    /// plain export.xml) read with ``GPXReader``. A missing or invalid file (one point the server would refuse
    /// is enough) is a rejection in ``summary`` naming the file, with the workout's line, not an error.
    public func takeRoutes() -> [WorkoutRoute] {
        let (inline, files) = parser.takeRoutes()
        var routes = inline
        let locator = RouteFileLocator(file: file)
        for (workout, path, line) in files {
            do {
                let points = try GPXReader.points(try locator.bytes(of: path), path: path)
                routes.append(WorkoutRoute(workout: workout, path: path, points: points))
                parser.noteRoute(nil, line: line)
            } catch let rejection as Rejection {
                parser.noteRoute(rejection, line: line)
            } catch let error as HealthError {
                parser.noteRoute(Rejection("route file cannot be read", error.message), line: line)
            } catch {
                parser.noteRoute(Rejection("route file cannot be read", "\(error)"), line: line)
            }
        }
        return routes
    }

    /// The characteristics of the export's `<Me>` element (HEALTHKIT.md §13), complete once the `<Me>` element
    /// has been read (it comes before the records); empty when the export has none or sets none.
    public var characteristics: Characteristics { parser.characteristics }
}
