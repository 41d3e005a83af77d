import Foundation
import Testing

@testable import HKQKit

/// `--fields`: which keys and columns list commands print, and in what order.
@Suite(.serialized, .liveServer) struct FieldSelectionTests {
    /// Stores two step samples and one distance sample for `subject`.
    static func insertWalk(subject: String) async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file(
            "walk.csv",
            """
            type,start,end,value,unit,source
            stepCount,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,1200,count,iPhone
            stepCount,2024-03-10T08:10:00Z,2024-03-10T08:20:00Z,950,count,Watch
            distanceWalkingRunning,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,0.9,km,iPhone

            """)
        let result = try await runLive(["insert", path], subject: subject)
        #expect(result.status == 0, "\(result.err)")
    }

    @Test func parsingRefusesEmptyAndRepeatedNames() throws {
        #expect(try FieldSelection(parsing: "value, type").fields == ["value", "type"])
        #expect(throws: UsageError.self) { try FieldSelection(parsing: "value,,type") }
        #expect(throws: UsageError.self) { try FieldSelection(parsing: "") }
        #expect(throws: UsageError.self) { try FieldSelection(parsing: "value,value") }
    }

    @Test func samplesKeepTheNamedFieldsInOrder() async throws {
        try await Self.insertWalk(subject: "fields-samples")
        let base = ["samples", "stepCount", "--tz", "UTC", "--fields", "value,start,source"]
        let json = try await runLive(base + ["--format", "json"], subject: "fields-samples")
        #expect(json.status == 0, "\(json.err)")
        #expect(
            json.out == """
                [
                  {"value":1200,"start":"2024-03-10T08:00:00Z","source":"iPhone"},
                  {"value":950,"start":"2024-03-10T08:10:00Z","source":"Watch"}
                ]

                """)
        let csv = try await runLive(base + ["--format", "csv"], subject: "fields-samples")
        #expect(csv.status == 0, "\(csv.err)")
        #expect(csv.out == "value,start,source\n1200,2024-03-10T08:00:00Z,iPhone\n950,2024-03-10T08:10:00Z,Watch\n")
        let table = try await runLive(base, subject: "fields-samples")
        #expect(table.status == 0, "\(table.err)")
        #expect(table.out.split(separator: "\n").first.map(String.init) == "VALUE  START                       SOURCE")
    }

    @Test func sourcesKeepTheNamedFieldsInOrder() async throws {
        try await Self.insertWalk(subject: "fields-sources")
        let base = ["sources", "stepCount", "--fields", "name,rank"]
        let json = try await runLive(base + ["--format", "json"], subject: "fields-sources")
        #expect(json.status == 0, "\(json.err)")
        let objects = json.out.split(separator: "\n").filter { $0.contains("{") }.map {
            $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: ","))
        }
        #expect(objects.count == 2)
        #expect(objects.allSatisfy { $0.hasPrefix(#"{"name":""#) && $0.contains(#","rank":"#) })
        let csv = try await runLive(base + ["--format", "csv"], subject: "fields-sources")
        #expect(csv.status == 0, "\(csv.err)")
        let lines = csv.out.split(separator: "\n")
        #expect(lines.first == "name,rank")
        #expect(
            Set(lines.dropFirst()) == ["iPhone,1", "Watch,2"] || Set(lines.dropFirst()) == ["Watch,1", "iPhone,2"])
    }

    @Test func anUnknownFieldIsAUsageErrorListingTheFields() async throws {
        try await Self.insertWalk(subject: "fields-unknown")
        let result = try await runLive(
            ["samples", "stepCount", "--fields", "value,sauce", "--format", "csv"], subject: "fields-unknown")
        #expect(result.status == 64)
        #expect(result.out == "")
        #expect(
            result.err.contains(
                "unknown field 'sauce' in '--fields'; did you mean 'source'? "
                    + "(fields: type, start, end, value, unit, source, uuid, metadata)"), "\(result.err)")
    }

    @Test func commandsWithoutAListRefuseFields() async throws {
        let stats = try await runLive(["stats", "stepCount", "--fields", "sum"], subject: "fields-refused")
        #expect(stats.status == 64)
        #expect(stats.err.contains("'stats' does not print a list of records"), "\(stats.err)")
        let changes = try await runLive(
            ["changes", "stepCount", "--fields", "uuid", "--format", "json"], subject: "fields-refused")
        #expect(changes.status == 64)
        #expect(changes.err.contains("prints one object"), "\(changes.err)")
        let chart = try await runLive(
            ["collection", "stepCount", "--fields", "sum", "--format", "chart"], subject: "fields-refused")
        #expect(chart.status == 64)
    }

    @Test func collectionJSONSelectsBucketKeys() async throws {
        try await Self.insertWalk(subject: "fields-collection")
        let result = try await runLive(
            [
                "collection", "stepCount", "--interval", "1d", "--tz",
                "UTC", "--fields", "sum,start", "--format", "json",
            ], subject: "fields-collection")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "[\n  {\"sum\":2150,\"start\":\"2024-03-10T00:00:00Z\"}\n]\n")
    }
}
