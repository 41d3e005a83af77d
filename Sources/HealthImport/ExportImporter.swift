import HealthModel

/// Imports an Apple Health export into a sink: what `hkq import FILE` drives.
///
/// Opens the file with ``ExportReader`` and hands every ``SampleBatch`` to the sink in order; the sink sends it
/// (a re-sent batch is recognised by its deterministic id and UUIDs). Returns the ``ImportSummary``. An error
/// thrown by the sink stops the import and is rethrown.
///
/// Threading: a value. The synchronous `run` reads the file on the calling thread (blocking file I/O) and calls
/// the sink and the progress callback there; the async `run` reads it on a thread of its own and calls them on
/// the calling task.
public struct ExportImporter: Sendable {
    /// The export file: export.zip or export.xml.
    public var path: String
    /// The person every sample is about.
    public var subject: String
    /// Batch size, pending-row cap, progress interval.
    public var options: ImportOptions

    /// An importer of the export at `path` for `subject`.
    public init(path: String, subject: String, options: ImportOptions = ImportOptions()) {
        self.path = path
        self.subject = subject
        self.options = options
    }

    /// Reads the whole export, calling `sink` with each batch; returns the summary.
    public func run(
        progress: ((ImportProgress) -> Void)? = nil, sink: (SampleBatch) throws -> Void
    ) throws -> ImportSummary {
        let reader = try ExportReader(path: path, subject: subject, options: options, progress: progress)
        while let batch = try reader.nextBatch() { try sink(batch) }
        _ = reader.takeRoutes()  // reads the route files, so the summary counts them
        return reader.summary
    }

    /// Reads the whole export, awaiting `sink` with each batch, then `workouts` once with every `<Workout>`,
    /// `characteristics` once with the `<Me>` values (when it sets any), `activitySummaries` once with every
    /// `<ActivitySummary>` but the export day's (when there are any), `correlations` once with every
    /// `<Correlation>` (after the samples, which hold their members) and `routes` once with the workouts' routes
    /// (HEALTHKIT.md §13); returns the summary.
    ///
    /// The export is parsed on a thread of its own up to `parseAhead` batches ahead of `sink` (``ParseAhead``),
    /// so parsing and sending use two cores; `sink` and `progress` are called in order on the calling task. An
    /// error of `sink` stops the parse thread at its next batch.
    public func run(
        progress: ((ImportProgress) -> Void)? = nil, parseAhead: Int = 4, sink: (SampleBatch) async throws -> Void,
        workouts: ([Workout]) async throws -> Void = { _ in },
        characteristics: (Characteristics) async throws -> Void = { _ in },
        activitySummaries: ([ActivitySummary]) async throws -> Void = { _ in },
        correlations: ([Correlation]) async throws -> Void = { _ in },
        routes: ([WorkoutRoute]) async throws -> Void = { _ in }
    ) async throws -> ImportSummary {
        let (pieces, room) = ParseAhead.start(path: path, subject: subject, options: options, depth: parseAhead)
        defer { room.stop() }
        var end: ParseAhead.Ending?
        for try await piece in pieces {
            switch piece {
            case .progress(let report): progress?(report)
            case .batch(let batch):
                try await sink(batch)
                room.give()
            case .end(let ending): end = ending
            }
        }
        guard let end else { throw HealthError(.internalError, "the import of \(path) ended before its summary") }
        try await workouts(end.workouts)
        if !end.characteristics.isEmpty { try await characteristics(end.characteristics) }
        if !end.activitySummaries.isEmpty { try await activitySummaries(end.activitySummaries) }
        try await correlations(end.correlations)
        try await routes(end.routes)
        return end.summary
    }
}
