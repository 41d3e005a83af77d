import Foundation
import HealthImport

/// The closing summary of `hkq import`: samples per type (new and already stored), elements skipped per kind,
/// records rejected per reason with their first line numbers, and the totals.
struct ImportReport: Sendable {
    /// The file as named on the command line.
    var file: String
    /// What the reader found.
    var summary: ImportSummary
    /// What the server acknowledged per type; `nil` for a dry run (nothing was sent).
    var stored: [String: PipelinedUpload.Counts]?
    /// What the server acknowledged of the workouts; `nil` for a dry run.
    var storedWorkouts: PipelinedUpload.Counts? = nil
    /// What the server acknowledged of the activity summaries (inserted: days new or changed; duplicates: stored
    /// already as sent); `nil` for a dry run.
    var storedSummaries: PipelinedUpload.Counts? = nil
    /// What the server acknowledged of the correlations; `nil` for a dry run.
    var storedCorrelations: PipelinedUpload.Counts? = nil
    /// What the server acknowledged of the workout routes; `nil` for a dry run.
    var storedRoutes: PipelinedUpload.Counts? = nil
    /// Workouts and correlations stored under an earlier release's identity that imported ones replaced.
    var replaced = 0
    /// Wall-clock seconds from opening the file to the last acknowledgement.
    var seconds: Double

    /// The summary in `format`: tables and a closing line, one JSON object, or the per-type CSV.
    func rendered(as format: OutputFormat) -> String {
        switch format {
        case .json: json.rendered + "\n"
        case .csv: types.renderedCSV()
        case .table, .chart: table
        }
    }

    /// One record per imported type, most samples first.
    var types: RecordSet {
        var columns: [RecordSet.Column] = [.init("type", title: "TYPE"), .init("samples", title: "SAMPLES")]
        if stored != nil {
            columns += [.init("inserted", title: "NEW"), .init("alreadyStored", title: "ALREADY STORED")]
        }
        var records = RecordSet(columns: columns)
        for (type, count) in ImportReport.descending(summary.imported) {
            var row: [JSONValue] = [.string(type), .integer(Int64(count))]
            if let stored {
                let counts = stored[type] ?? PipelinedUpload.Counts()
                row += [.integer(Int64(counts.inserted)), .integer(Int64(counts.duplicates))]
            }
            records.append(row)
        }
        return records
    }

    /// One record per skipped kind, most frequent first.
    var skipped: RecordSet {
        var records = RecordSet(columns: [.init("kind", title: "SKIPPED"), .init("count", title: "COUNT")])
        for (kind, count) in ImportReport.descending(summary.skipped) {
            records.append([.string(kind), .integer(Int64(count))])
        }
        return records
    }

    /// One record per element and rejection reason, in the order they first appeared.
    var rejected: RecordSet {
        var records = RecordSet(columns: [
            .init("element", title: "REJECTED"), .init("reason", title: "REASON"), .init("count", title: "COUNT"),
            .init("firstLines", title: "FIRST LINES"), .init("example", title: "EXAMPLE", inTable: false),
        ])
        for report in summary.rejected {
            records.append([
                .string(report.element), .string(report.reason), .integer(Int64(report.count)),
                .array(report.firstLines.map { .integer(Int64($0)) }), .string(report.example),
            ])
        }
        return records
    }

    /// The closing line: `imported 26070 samples from export.zip in 1.2s (26070 new, 0 already stored); 107 of them
    /// category samples; …`, every count agreeing with its noun (`1 sample`, `1 of them a category sample`).
    var closingLine: String {
        let seconds = String(format: "%.1fs", self.seconds)
        func count(_ number: Int, _ noun: String, _ plural: String? = nil) -> String {
            HumanFormat.count(number, noun, plural: plural)
        }
        var line: String
        if let stored {
            let new = stored.values.reduce(0) { $0 + $1.inserted }
            let old = stored.values.reduce(0) { $0 + $1.duplicates }
            line = "imported \(count(summary.importedCount, "sample")) from \(file) in \(seconds) "
            line += "(\(new) new, \(old) already stored)"
        } else {
            line = "dry run: read \(count(summary.importedCount, "sample")) from \(file) in \(seconds) (nothing sent)"
        }
        let category = summary.importedCategoryCount
        if category == 1 { line += "; 1 of them a category sample" }
        if category > 1 { line += "; \(category) of them category samples" }
        if summary.identicalRows > 0 { line += "; \(count(summary.identicalRows, "identical row")) counted once" }
        if summary.correlations > 0 {
            line += "; \(count(summary.correlations, "correlation"))"
            if let storedCorrelations {
                line += " (\(storedCorrelations.inserted) new, \(storedCorrelations.duplicates) already stored)"
            }
        }
        if summary.workouts > 0 {
            line += "; \(count(summary.workouts, "workout"))"
            if let storedWorkouts {
                line += " (\(storedWorkouts.inserted) new, \(storedWorkouts.duplicates) already stored)"
            }
        }
        if summary.routes > 0 {
            line += "; \(count(summary.routes, "route"))"
            if let storedRoutes { line += " (\(storedRoutes.inserted) new, \(storedRoutes.duplicates) already stored)" }
        }
        if summary.characteristics > 0 {
            line += "; \(count(summary.characteristics, "characteristic")) from <Me>"
            line += stored == nil ? " (not sent)" : " (stored)"
        }
        if summary.activitySummaries > 0 {
            line += "; \(count(summary.activitySummaries, "activity summary", "activity summaries"))"
            if let storedSummaries {
                line += " (\(storedSummaries.inserted) new or changed, \(storedSummaries.duplicates) already stored)"
            }
        }
        if summary.identicalActivitySummaries > 0 {
            let repeats = count(summary.identicalActivitySummaries, "activity summary", "activity summaries")
            line += "; \(repeats) given again alike, counted once"
        }
        if replaced > 0 {
            line += "; replaced \(count(replaced, "object")) an earlier release stored under its content identity"
        }
        line += "; skipped \(count(summary.skippedCount, "element"))"
        line += "; rejected \(count(summary.rejectedCount, "element"))"
        return line
    }

    private var table: String {
        // An export of workouts or summaries alone has no samples: no table of none.
        var blocks = summary.imported.isEmpty ? [] : [types.renderedTable()]
        if !summary.skipped.isEmpty { blocks.append(skipped.renderedTable()) }
        if !summary.rejected.isEmpty {
            var lines = rejected
            lines.rows = lines.rows.map { row in
                var row = row
                if case .array(let numbers) = row[3] {
                    row[3] = .string(numbers.map(\.plainText).joined(separator: ", "))
                }
                return row
            }
            blocks.append(lines.renderedTable())
        }
        blocks.append(closingLine + "\n")
        return blocks.map { $0.hasSuffix("\n") ? $0 : $0 + "\n" }.joined(separator: "\n")
    }

    private var json: JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("file", .string(file)), ("dryRun", .bool(stored == nil)),
            ("seconds", .number((seconds * 1000).rounded() / 1000)),
            ("recordsSeen", .integer(Int64(summary.recordsSeen))),
            ("samples", .integer(Int64(summary.importedCount))),
            ("categorySamples", .integer(Int64(summary.importedCategoryCount))),
            ("identicalRows", .integer(Int64(summary.identicalRows))),
            ("workouts", .integer(Int64(summary.workouts))),
            ("correlations", .integer(Int64(summary.correlations))),
            ("routes", .integer(Int64(summary.routes))),
            ("characteristics", .integer(Int64(summary.characteristics))),
            ("activitySummaries", .integer(Int64(summary.activitySummaries))),
        ]
        if let stored {
            pairs.append(("inserted", .integer(Int64(stored.values.reduce(0) { $0 + $1.inserted }))))
            pairs.append(("alreadyStored", .integer(Int64(stored.values.reduce(0) { $0 + $1.duplicates }))))
            pairs.append(("workoutsInserted", .integer(Int64(storedWorkouts?.inserted ?? 0))))
            pairs.append(("activitySummariesChanged", .integer(Int64(storedSummaries?.inserted ?? 0))))
            pairs.append(("correlationsInserted", .integer(Int64(storedCorrelations?.inserted ?? 0))))
            pairs.append(("routesInserted", .integer(Int64(storedRoutes?.inserted ?? 0))))
        }
        pairs += [
            ("imported", .array(types.rows.indices.map { types.jsonObject(row: $0) })),
            ("skipped", .array(skipped.rows.indices.map { skipped.jsonObject(row: $0) })),
            ("rejected", .array(rejected.rows.indices.map { rejected.jsonObject(row: $0) })),
        ]
        return .object(pairs)
    }

    /// Dictionary entries, largest count first, then by name.
    private static func descending(_ counts: [String: Int]) -> [(String, Int)] {
        counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
    }
}
