import Foundation
import TestSupport
import Testing

@testable import HKQKit

/// `--to` excludes what it names in every command (an instant, or the first day, night or bucket not listed);
/// `--through` names the last day, night or bucket listed; `activity` and `collection` read their old inclusive
/// `--to` as `--through`, with a deprecation warning.
@Suite(.serialized, .liveServer) struct RangeEndTests {
    /// Three step samples starting at 10:00 UTC on 2024-01-01, -02 and -03 (100, 200 and 400 steps).
    static func insertSteps(subject: String) async throws {
        let live = try #require(LiveServer.current)
        let rows =
            ["type,start,end,value,unit,source"]
            + [(1, 100), (2, 200), (3, 400)].map { day, value in
                "stepCount,2024-01-0\(day)T10:00:00Z,2024-01-0\(day)T10:30:00Z,\(value),count,Phone"
            }
        let path = try live.file("steps.csv", rows.joined(separator: "\n") + "\n")
        let inserted = try await runLive(["insert", path], subject: subject)
        #expect(inserted.status == 0, "\(inserted.err)")
    }

    @Test func samplesAndStatsExcludeASampleStartingAtTo() async throws {
        try await Self.insertSteps(subject: "range-samples")
        let scope = ["--from", "2024-01-01", "--tz", "UTC", "--format", "json"]
        let before = try await runLive(
            ["samples", "stepCount", "--to", "2024-01-03T10:00:00Z"] + scope, subject: "range-samples")
        let rows: [[String: Any]] = try json(before.out)
        #expect(rows.map { $0["value"] as? Double } == [100, 200], "\(before.out)")
        let after = try await runLive(
            ["samples", "stepCount", "--to", "2024-01-03T10:00:01Z"] + scope, subject: "range-samples")
        #expect(try json(after.out, as: [[String: Any]].self).count == 3)

        let stats = try await runLive(
            ["stats", "stepCount", "--to", "2024-01-03T10:00:00Z"] + scope, subject: "range-samples")
        let figures: [String: Any] = try json(stats.out)
        #expect(figures["sum"] as? Double == 300, "\(stats.out)")
        #expect(stats.err == "")
    }

    @Test func collectionListsThroughItsBucketAndWarnsOnTheOldTo() async throws {
        try await Self.insertSteps(subject: "range-collection")
        let query = [
            "collection", "stepCount", "--interval", "1d", "--tz", "UTC", "--from", "2024-01-01", "--format", "json",
        ]
        let through = try await runLive(query + ["--through", "2024-01-03"], subject: "range-collection")
        #expect(through.status == 0 && through.err == "", "\(through.err)")
        let buckets: [[String: Any]] = try json(through.out)
        #expect(buckets.map { $0["sum"] as? Double } == [100, 200, 400], "\(through.out)")

        let old = try await runLive(query + ["--to", "2024-01-03"], subject: "range-collection")
        #expect(old.status == 0)
        #expect(old.out == through.out)
        #expect(
            old.err == "warning: 'collection --to' lists the bucket it names, unlike --to elsewhere (the first one "
                + "not listed); this spelling is deprecated: use --through 2024-01-03\n")

        let both = try await runLive(
            query + ["--to", "2024-01-03", "--through", "2024-01-03"], subject: "range-collection")
        #expect(both.status == 64)
        #expect(both.err.hasPrefix("error: --to and --through exclude each other"))
        let alone = try await runLive(
            ["collection", "stepCount", "--through", "2024-01-03"], subject: "range-collection")
        #expect(alone.status == 64 && alone.err.hasPrefix("error: --from and --through go together"), "\(alone.err)")
    }

    @Test func sleepNightsEndBeforeToAndThroughThrough() async throws {
        let scope = ["sleep", "--tz", "Europe/Berlin", "--from", "2026-03-28", "--format", "csv", "--fields", "night"]
        let to = try await runLive(scope + ["--to", "2026-03-31"], subject: "range-sleep")
        #expect(to.status == 0, "\(to.err)")
        #expect(to.out == "night\n2026-03-28\n2026-03-29\n2026-03-30\n")
        let through = try await runLive(scope + ["--through", "2026-03-31"], subject: "range-sleep")
        #expect(through.out == "night\n2026-03-28\n2026-03-29\n2026-03-30\n2026-03-31\n")
        #expect(through.err == "")
        let one = try await runLive(scope + ["--through", "2026-03-28"], subject: "range-sleep")
        #expect(one.out == "night\n2026-03-28\n")
        let backwards = try await runLive(scope + ["--through", "2026-03-27"], subject: "range-sleep")
        #expect(backwards.status == 64 && backwards.err.hasPrefix("error: --through must not be before --from"))
    }

    @Test func activityListsThroughItsDayAndWarnsOnTheOldTo() async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file("export.xml", ActivityExport.document(days: 6))
        let imported = try await runLive(["import", path], subject: "range-activity")
        #expect(imported.status == 0, "\(imported.err)")
        let scope = ["activity", "--tz", "UTC", "--from", "2024-01-02", "--format", "csv", "--fields", "date"]
        let through = try await runLive(scope + ["--through", "2024-01-04"], subject: "range-activity")
        #expect(through.out == "date\n2024-01-02\n2024-01-03\n2024-01-04\n", "\(through.err)")
        #expect(through.err == "")
        let old = try await runLive(scope + ["--to", "2024-01-04"], subject: "range-activity")
        #expect(old.out == through.out)
        #expect(old.err.hasPrefix("warning: 'activity --to' lists the day it names"), "\(old.err)")
        #expect(old.err.hasSuffix("use --through 2024-01-04\n"))
    }
}
