import HealthModel

/// Elements of one kind rejected for one reason: how many, the first few lines, and one full message.
public struct RejectionReport: Hashable, Sendable {
    /// The element rejected: `Record`, `Workout`, `Correlation`, `ActivitySummary`, `Me`, `WorkoutRoute`.
    public var element: String
    /// The reason, e.g. `unknown unit "furlong"` or `startDate is not a date`.
    public var reason: String
    /// Records rejected for it.
    public var count: Int
    /// Lines (1-based) of the first records rejected for it, at most ``ImportOptions/maxLinesPerReason``.
    public var firstLines: [Int]
    /// The full message for the first of them, e.g. `startDate "2017-13-01 10:00:00 -0400" is not a date`.
    public var example: String

    /// A report; normally built by the importer.
    public init(element: String, reason: String, count: Int, firstLines: [Int], example: String) {
        self.element = element
        self.reason = reason
        self.count = count
        self.firstLines = firstLines
        self.example = example
    }
}

/// What an import did: samples imported per type, elements skipped per kind, records rejected per reason.
///
/// Bounded whatever the file: at most ``ImportSummary/maxKinds`` skip kinds and reasons are kept apart, the rest
/// are counted under ``ImportSummary/otherKind``.
public struct ImportSummary: Hashable, Sendable {
    /// Most skip kinds or rejection reasons listed separately.
    public static let maxKinds = 64
    /// The kind or reason under which the ones past ``maxKinds`` are counted.
    public static let otherKind = "(other)"

    /// Top-level `<Record>` elements read (quantity, category and others; records nested in a `<Correlation>`
    /// are not counted, as they also appear at top level).
    public var recordsSeen = 0
    /// Samples imported, by short type identifier (`stepCount`, `sleepAnalysis`).
    public var imported: [String: Int] = [:]
    /// Elements skipped by kind: the element name for top-level elements other than `<Record>` (`ActivitySummary`,
    /// `ExportDate`, …), the record type for records that are neither
    /// quantity nor category samples (`HKDataTypeSleepDurationGoal`).
    public var skipped: [String: Int] = [:]
    /// Rejected records grouped by reason, in the order the reasons first appeared.
    public var rejected: [RejectionReport] = []
    /// Records identical to one earlier in the same batch (same UUID, so the same content), counted once: not
    /// sent and not in ``imported``. Identical records further apart are sent and count as already stored.
    public var identicalRows = 0
    /// `<ActivitySummary>` elements that repeat an earlier one of the same day with the same values, counted once.
    public var identicalActivitySummaries = 0
    /// `<Workout>` elements read (HEALTHKIT.md §13); the importer hands them out with ``ExportReader/takeWorkouts()``.
    public var workouts = 0
    /// `<Correlation>` elements (blood pressure, food) read: each is kept as a correlation object naming its member
    /// records, which exports also write at top level and which are imported from there, once (HEALTHKIT.md §13);
    /// the importer hands them out with ``ExportReader/takeCorrelations()``.
    public var correlations = 0
    /// Workout routes read with their points (route files and inline `<Location>`s); the importer hands them out
    /// with ``ExportReader/takeRoutes()``.
    public var routes = 0
    /// `<Me>` elements read (an export has one): the characteristics (HEALTHKIT.md §13), not counted as skipped.
    public var characteristicElements = 0
    /// Characteristics set by the `<Me>` element (date of birth, biological sex …; not-set values not counted);
    /// the importer hands them out with ``ExportReader/characteristics``.
    public var characteristics = 0
    /// `<ActivitySummary>` elements read (HEALTHKIT.md §13), the export day's excluded; the importer hands them
    /// out with ``ExportReader/takeActivitySummaries()``.
    public var activitySummaries = 0
    /// The skip kind of the export day's activity summary: Apple writes it while the day is still running.
    public static let incompleteActivitySummary = "ActivitySummary of the export day (incomplete)"
    /// Batches handed to the sink.
    public var batches = 0
    /// Bytes of the file read (the compressed size for a zip).
    public var bytesRead: Int64 = 0
    /// Bytes of export.xml parsed.
    public var xmlBytes: Int64 = 0

    /// An empty summary.
    public init() {}

    /// Samples imported in all.
    public var importedCount: Int { imported.values.reduce(0, +) }
    /// Category samples imported (sleep, stand hours, events …: HEALTHKIT.md §12), part of ``importedCount``.
    public var importedCategoryCount: Int {
        imported.reduce(0) { $0 + ((try? QuantityType.named($1.key))?.isCategory == true ? $1.value : 0) }
    }
    /// Elements skipped in all.
    public var skippedCount: Int { skipped.values.reduce(0, +) }
    /// Records rejected in all.
    public var rejectedCount: Int { rejected.reduce(0) { $0 + $1.count } }

    /// Counts one skipped element of `kind`.
    mutating func skip(_ kind: String) {
        if skipped[kind] == nil, skipped.count >= ImportSummary.maxKinds {
            skipped[ImportSummary.otherKind, default: 0] += 1
        } else {
            skipped[kind, default: 0] += 1
        }
    }

    /// Counts one element the server refused (after the file was read): `element` and `reason` group it,
    /// `detail` names it with the server's message, `line` is its line in export.xml when known.
    public mutating func rejectStored(element: String, reason: String, detail: String, line: Int?, maxLines: Int = 5) {
        var index = [String: Int](
            rejected.enumerated().map { (Self.key($1.element, $1.reason), $0) }, uniquingKeysWith: { first, _ in first }
        )
        reject(Rejection(reason, detail), element: element, line: line, maxLines: maxLines, index: &index)
    }

    /// Counts one `element` rejected for `rejection` on `line`, keeping at most `maxLines` lines per element and
    /// reason; `index` finds a report by ``key(_:_:)``.
    mutating func reject(
        _ rejection: Rejection, element: String, line: Int?, maxLines: Int, index: inout [String: Int]
    ) {
        var reason = rejection.reason
        if index[Self.key(element, reason)] == nil, rejected.count >= ImportSummary.maxKinds {
            reason = ImportSummary.otherKind
        }
        if let position = index[Self.key(element, reason)] {
            rejected[position].count += 1
            if let line, rejected[position].firstLines.count < maxLines { rejected[position].firstLines.append(line) }
        } else {
            index[Self.key(element, reason)] = rejected.count
            let example = rejection.detail.count > 200 ? String(rejection.detail.prefix(200)) + "…" : rejection.detail
            let lines = line.map { maxLines > 0 ? [$0] : [] } ?? []
            rejected.append(
                RejectionReport(element: element, reason: reason, count: 1, firstLines: lines, example: example))
        }
    }

    /// The key of an element's rejections for one reason.
    static func key(_ element: String, _ reason: String) -> String { element + "\u{1F}" + reason }
}

/// Why one record was rejected: a reason that groups records, and the message for this one.
struct Rejection: Error {
    /// Groups records (no per-record values in it, except the type or unit named).
    var reason: String
    /// The full message for this record.
    var detail: String

    init(_ reason: String, _ detail: String? = nil) {
        self.reason = reason
        self.detail = detail ?? reason
    }

    /// An element with more children of one kind than the wire carries (`workout has 100000 events; at most
    /// 4096`): it is rejected whole, never stored in part.
    static func tooMany(_ children: String, in element: String, count: Int, limit: Int) -> Rejection {
        Rejection("\(element) has too many \(children)", "\(element) has \(count) \(children); at most \(limit)")
    }
}
