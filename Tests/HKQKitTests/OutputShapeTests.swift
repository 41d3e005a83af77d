import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Every command's JSON and CSV, from a real hkd, checked against the shapes docs/OUTPUT.md writes down; and
/// collection buckets across DST changes, whose printed starts must be distinct and the engine's instants.
@Suite(.serialized, .liveServer) struct OutputShapeTests {
    /// Two sources' steps and one distance around New York's 2026 fall-back (01:10 EDT and 01:10 EST).
    static let rows = [
        "stepCount,2026-11-01T01:10:00-04:00,2026-11-01T01:20:00-04:00,100,count,iPhone",
        "stepCount,2026-11-01T01:10:00-05:00,2026-11-01T01:20:00-05:00,200,count,Watch",
        "distanceWalkingRunning,2026-11-01T01:10:00-04:00,2026-11-01T01:20:00-04:00,80,m,iPhone",
    ]

    /// Inserts ``rows`` for `subject` and returns what `insert --format json` printed.
    @discardableResult
    static func seed(_ subject: String, format: String = "json") async throws -> RunResult {
        let live = try #require(LiveServer.current)
        let path = try live.file("rows.csv", "type,start,end,value,unit,source\n" + rows.joined(separator: "\n") + "\n")
        let result = try await runLive(["insert", path, "--format", format], subject: subject)
        #expect(result.status == 0, "\(result.err)")
        return result
    }

    /// Runs hkq for `subject` and expects success.
    static func run(_ arguments: [String], subject: String) async throws -> String {
        let result = try await runLive(arguments, subject: subject)
        #expect(result.status == 0, "\(arguments): \(result.err)")
        return result.out
    }

    static let newYork = ["--tz", "America/New_York"]

    @Test func insertShapes() async throws {
        let json = try await Self.seed("shape-insert")
        let value = try OutputShapes.expectJSON(json.out, section: "insert")
        #expect(value.elements.count == 2)
        let again = try await Self.seed("shape-insert", format: "csv")
        let rows = try OutputShapes.expectCSV(again.out, section: "insert")
        #expect(rows.map { $0["alreadyStored"] } == ["2", "1"])
    }

    @Test func samplesShapes() async throws {
        try await Self.seed("shape-samples")
        for zone in ["America/New_York", "UTC"] {
            let arguments = ["samples", "stepCount", "--tz", zone]
            let json = try await Self.run(arguments + ["--format", "json"], subject: "shape-samples")
            let value = try OutputShapes.expectJSON(json, section: "samples")
            let starts = value.elements.compactMap { $0["start"]?.text }
            #expect(
                starts
                    == (zone == "UTC"
                        ? ["2026-11-01T05:10:00Z", "2026-11-01T06:10:00Z"]
                        : ["2026-11-01T01:10:00-04:00", "2026-11-01T01:10:00-05:00"]))
            let csv = try await Self.run(arguments + ["--format", "csv"], subject: "shape-samples")
            #expect(try OutputShapes.expectCSV(csv, section: "samples").map { $0["start"] } == starts)
        }
        let micros = try await Self.run(
            ["samples", "stepCount", "--format", "json", "--time-format", "epoch-us"], subject: "shape-samples")
        #expect(try Parsed.parse(micros).elements.first?["start"].map { "\($0)" } == "integer(1793509800000000)")
        let millis = try await Self.run(
            ["samples", "stepCount", "--format", "csv", "--time-format", "epoch-ms"], subject: "shape-samples")
        #expect(millis.split(separator: "\n")[1].hasPrefix("stepCount,1793509800000,1793510400000,100,"))
    }

    @Test func joinedSamplesShapes() async throws {
        try await Self.seed("shape-join")
        let arguments = ["samples", "stepCount,distanceWalkingRunning", "--join", "interval"] + Self.newYork
        let json = try await Self.run(arguments + ["--format", "json"], subject: "shape-join")
        #expect(try OutputShapes.expectJSON(json, section: "samples --join interval").elements.count == 2)
        let csv = try await Self.run(arguments + ["--format", "csv"], subject: "shape-join")
        try OutputShapes.expectCSV(csv, section: "samples --join interval")
    }

    @Test func statsShapes() async throws {
        try await Self.seed("shape-stats")
        let all = ["stats", "stepCount", "--options", "sum,duration,by-source"] + Self.newYork
        let json = try await Self.run(all + ["--format", "json"], subject: "shape-stats")
        let value = try OutputShapes.expectJSON(json, section: "stats")
        #expect(value["duration"].map { "\($0)" } == "integer(1200)")
        #expect(value["sources"]?.elements.count == 2)
        let rows = try OutputShapes.expectCSV(
            try await Self.run(all + ["--format", "csv"], subject: "shape-stats"), section: "stats")
        #expect(
            rows.map { $0["source"] } == ["", "iPhone", "Watch"]
                || rows.map { $0["source"] } == ["", "Watch", "iPhone"])
        let live = try #require(LiveServer.current)
        let heart = try live.file(
            "heart.csv", "type,start,end,value,unit,source\nheartRate,2026-11-01T01:10:00-04:00,,72,count/min,Watch\n")
        _ = try await Self.run(["insert", heart], subject: "shape-stats")
        let discrete = ["stats", "heartRate", "--options", "avg,min,max,recent", "--format", "json"] + Self.newYork
        let figures = try OutputShapes.expectJSON(
            try await Self.run(discrete, subject: "shape-stats"), section: "stats")
        #expect(figures["mostRecentStart"]?.text == "2026-11-01T01:10:00-04:00")
        let table = try await Self.run(
            ["stats", "stepCount", "--options", "duration"] + Self.newYork, subject: "shape-stats")
        #expect(table.contains("DURATION  20m"))
    }

    @Test func categoryShapes() async throws {
        let live = try #require(LiveServer.current)
        let night = try live.file(
            "night.csv",
            """
            type,start,end,value,unit,source
            sleepAnalysis,2026-11-01T00:30:00-04:00,2026-11-01T07:00:00-05:00,inBed,,iPhone
            sleepAnalysis,2026-11-01T01:00:00-04:00,2026-11-01T03:00:00-05:00,asleepCore,,Watch

            """)
        _ = try await Self.run(["insert", night], subject: "shape-category")
        let tagged = try live.file(
            "tagged.jsonl",
            #"{"type":"sleepAnalysis","start":"2026-11-02T01:00:00-05:00","end":"2026-11-02T02:00:00-05:00","value":"awake","source":"Ring","metadata":{"HKTimeZone":"America/New_York","n":2}}"#
                + "\n")
        _ = try await Self.run(["insert", tagged], subject: "shape-category")
        let samples = ["samples", "sleepAnalysis"] + Self.newYork
        let rows = try OutputShapes.expectJSON(
            try await Self.run(samples + ["--format", "json"], subject: "shape-category"),
            section: "samples (category types)")
        #expect(rows.elements.compactMap { $0["value"]?.text } == ["inBed", "asleepCore", "awake"])
        #expect(rows.elements.map { $0["metadata"] == nil } == [true, true, false])
        try OutputShapes.expectCSV(
            try await Self.run(samples + ["--format", "csv"], subject: "shape-category"),
            section: "samples (category types)")
        let stats = ["stats", "sleepAnalysis", "--options", "duration,by-value,by-source"] + Self.newYork
        let figures = try OutputShapes.expectJSON(
            try await Self.run(stats + ["--format", "json"], subject: "shape-category"),
            section: "stats (category types)")
        #expect(figures["sources"]?.elements.count == 3)
        try OutputShapes.expectCSV(
            try await Self.run(stats + ["--format", "csv"], subject: "shape-category"),
            section: "stats (category types)")
        // The fall-back night ending 2026-11-01 at 18:00 lasts 25 hours.
        let sleep = ["sleep", "--from", "2026-10-31", "--to", "2026-11-02"] + Self.newYork
        let nights = try OutputShapes.expectJSON(
            try await Self.run(sleep + ["--format", "json"], subject: "shape-category"), section: "sleep"
        ).elements
        #expect(nights.compactMap { $0["night"]?.text } == ["2026-10-31", "2026-11-01"])
        #expect(nights.last?["start"]?.text == "2026-10-31T18:00:00-04:00")
        #expect(nights.last?["end"]?.text == "2026-11-01T18:00:00-05:00")
        try OutputShapes.expectCSV(
            try await Self.run(sleep + ["--format", "csv"], subject: "shape-category"), section: "sleep")
    }

    @Test func collectionShapes() async throws {
        try await Self.seed("shape-collection")
        let arguments =
            ["collection", "stepCount", "--interval", "1h", "--options", "sum,recent,duration,by-source"]
            + Self.newYork + ["--from", "2026-11-01T00:00", "--through", "2026-11-01T02:00"]
        let json = try await Self.run(arguments + ["--format", "json"], subject: "shape-collection")
        let buckets = try OutputShapes.expectJSON(json, section: "collection").elements
        let starts: [String] = buckets.compactMap { $0["start"]?.text }
        #expect(starts.contains("2026-11-01T01:00:00-05:00"))
        let csv = try await Self.run(arguments + ["--format", "csv"], subject: "shape-collection")
        let rows = try OutputShapes.expectCSV(csv, section: "collection")
        #expect(!csv.contains("(merged)") && rows.contains { $0["source"] == "Watch" })
        let table = try await Self.run(arguments, subject: "shape-collection")
        #expect(!table.contains("(merged)"))
        let chart = await runHKQ(["stats", "stepCount", "--format", "chart"])
        #expect(chart.status == 64 && chart.err.contains("draws no chart"))
    }

    @Test func changesAndWatchShapes() async throws {
        try await Self.seed("shape-changes")
        let changes = ["changes", "stepCount"] + Self.newYork
        let page = try OutputShapes.expectJSON(
            try await Self.run(changes + ["--format", "json"], subject: "shape-changes"), section: "changes")
        let anchor = try #require(page["anchor"].flatMap { if case .integer(let n) = $0 { n } else { nil } })
        #expect(page["added"]?.elements.count == 2 && page["more"].map { "\($0)" } == "bool(false)")
        let empty = try await Self.run(
            changes + ["--anchor", "\(anchor)", "--format", "json"], subject: "shape-changes")
        #expect(empty == "{\"added\":[],\"deleted\":[],\"anchor\":\(anchor),\"more\":false}\n")
        let uuid = try #require(page["added"]?.elements.first?["uuid"]?.text)
        _ = try await Self.run(["delete", "stepCount", "--uuid", uuid], subject: "shape-changes")
        let csv = try await Self.run(changes + ["--anchor", "\(anchor)", "--format", "csv"], subject: "shape-changes")
        let rows = try OutputShapes.expectCSV(csv, section: "changes")
        #expect(rows.map { $0["change"] } == ["deleted", "anchor"] && rows[0]["uuid"] == uuid)

        let watch = try await Self.run(
            ["watch", "stepCount", "--count", "2", "--format", "json"] + Self.newYork, subject: "shape-changes")
        let deletion = try await Self.run(
            ["watch", "stepCount", "--anchor", "\(anchor)", "--count", "1", "--format", "json"],
            subject: "shape-changes")
        let buckets = try await Self.run(
            ["watch", "stepCount", "--collection", "--interval", "1h", "--count", "1", "--format", "json"]
                + Self.newYork,
            subject: "shape-changes")
        var kinds: [String] = []
        for line in (watch + deletion + buckets).split(separator: "\n") {
            let kind = try #require(try Parsed.parse(line)["kind"]?.text)
            kinds.append(kind)
            _ = try OutputShapes.expectJSON(String(line), section: "watch", label: "ndjson \(kind)")
        }
        // From 0: the remaining sample and the deletion; from the anchor: the deletion; then a bucket.
        #expect(kinds == ["added", "deleted", "deleted", "bucket"])
        let watchCSV = try await Self.run(
            ["watch", "stepCount", "--count", "1", "--format", "csv"] + Self.newYork, subject: "shape-changes")
        #expect(try OutputShapes.expectCSV(watchCSV, section: "watch").map { $0["kind"] } == ["added"])
    }

    @Test func correlationShapes() async throws {
        let live = try #require(LiveServer.current)
        func member(_ type: String, _ value: Int, _ time: String) -> String {
            #"<Record type="HKQuantityTypeIdentifierBloodPressure\#(type)" sourceName="Cuff" unit="mmHg" startDate="\#(time)" endDate="\#(time)" value="\#(value)"/>"#
        }
        let stored = "2024-03-03 07:00:00 +0100"
        let loose = "2024-03-04 07:05:00 +0100"
        let pair = member("Systolic", 121, stored) + member("Diastolic", 79, stored)
        let correlation =
            #"<Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="\#(stored)" endDate="\#(stored)">"#
            + pair + "</Correlation>"
        let xml =
            #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<HealthData>\n" + pair + correlation
            + member("Systolic", 134, loose) + member("Diastolic", 86, loose) + "\n</HealthData>\n"
        let path = try live.file("pressure.xml", xml)
        let imported = try await Self.run(["import", path, "--format", "json"], subject: "shape-pressure")
        #expect(imported.contains("\"correlationsInserted\":1"), "\(imported)")
        let samples = ["samples", "bloodPressure"] + Self.newYork
        let json = try await Self.run(samples + ["--format", "json"], subject: "shape-pressure")
        #expect(try OutputShapes.expectJSON(json, section: "samples bloodPressure").elements.count == 2)
        let csv = try await Self.run(samples + ["--format", "csv"], subject: "shape-pressure")
        let records = try OutputShapes.expectCSV(csv, section: "samples bloodPressure")
        #expect(records.map { $0["uuid"]?.isEmpty } == [false, true])
    }

    @Test func routeShapes() async throws {
        let live = try #require(LiveServer.current)
        let points = RouteExport.points(5, seed: 1, start: Date(timeIntervalSince1970: 1_704_093_120))
        let xml = RouteExport.document(
            path: "/workout-routes/absent.gpx", start: "2024-01-01 08:12:00 +0100", end: "2024-01-01 08:32:00 +0100",
            inline: points)
        _ = try await runLive(["import", try live.file("route.xml", xml)], subject: "shape-route")
        let workouts = try await Self.run(["workouts", "--format", "csv"], subject: "shape-route")
        let uuid = try #require(workouts.split(separator: "\n").last?.split(separator: ",").last.map(String.init))
        let json = try await Self.run(["route", uuid, "--format", "json"] + Self.newYork, subject: "shape-route")
        #expect(try OutputShapes.expectJSON(json, section: "route").elements.count == 5)
        let csv = try await Self.run(["route", uuid, "--format", "csv"], subject: "shape-route")
        #expect(try OutputShapes.expectCSV(csv, section: "route").count == 5)
    }

    @Test func workoutShapes() async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file("export.xml", WorkoutExport.document())
        let imported = try await runLive(["import", path], subject: "shape-workouts")
        #expect(imported.status == 3, "the route files it names are absent: \(imported.out)")
        let json = try await Self.run(["workouts", "--format", "json"] + Self.newYork, subject: "shape-workouts")
        #expect(try OutputShapes.expectJSON(json, section: "workouts").elements.count == 60)
        let csv = try await Self.run(["workouts", "--format", "csv", "--type", "walking"], subject: "shape-workouts")
        #expect(try OutputShapes.expectCSV(csv, section: "workouts").count == 13)
        let months = try await Self.run(
            ["workouts", "--by", "month", "--format", "json"] + Self.newYork, subject: "shape-workouts")
        let buckets = try OutputShapes.expectJSON(months, section: "workouts --by")
        #expect(buckets.elements.count >= 6)
        let weeks = try await Self.run(["workouts", "--by", "week", "--format", "csv"], subject: "shape-workouts")
        #expect(try OutputShapes.expectCSV(weeks, section: "workouts --by").count >= 20)
    }

    @Test func characteristicsAndActivityShapes() async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file("export.xml", ActivityExport.document(days: 10))
        _ = try await Self.run(["import", path], subject: "shape-activity")
        let json = try await Self.run(["characteristics", "--format", "json"], subject: "shape-activity")
        let keys = try OutputShapes.expectJSON(json, section: "characteristics").elements
        #expect(keys.count == CharacteristicKey.allCases.count)
        let set = try await Self.run(
            ["characteristics", "set", "bloodType=abNegative", "--format", "csv"], subject: "shape-activity")
        let rows = try OutputShapes.expectCSV(set, section: "characteristics")
        #expect(rows.first { $0["key"] == "bloodType" }?["value"] == "abNegative")
        #expect(rows.first { $0["key"] == "activityMoveMode" }?["value"] == "")
        let days = try await Self.run(["activity", "--format", "json", "--tz", "UTC"], subject: "shape-activity")
        #expect(try OutputShapes.expectJSON(days, section: "activity").elements.count == 10)
        let compared = try await Self.run(
            ["activity", "--compare", "--format", "json", "--tz", "UTC"], subject: "shape-activity")
        #expect(try OutputShapes.expectJSON(compared, section: "activity").elements.count == 10)
        #expect(compared.contains("\"ourAppleStandHours\""))
        let csv = try await Self.run(
            [
                "activity", "--compare", "--format", "csv", "--from", "2024-01-03", "--through", "2024-01-04", "--tz",
                "UTC",
            ],
            subject: "shape-activity")
        #expect(
            try OutputShapes.expectCSV(csv, section: "activity").map { $0["date"] } == ["2024-01-03", "2024-01-04"])
    }

    @Test func sourcesTypesAdminAndDeleteShapes() async throws {
        try await Self.seed("shape-misc")
        let sources = try await Self.run(["sources", "stepCount", "--format", "json"], subject: "shape-misc")
        #expect(try OutputShapes.expectJSON(sources, section: "sources").elements.count == 2)
        try OutputShapes.expectCSV(
            try await Self.run(["sources", "stepCount", "--format", "csv"], subject: "shape-misc"), section: "sources")
        let types = try OutputShapes.expectJSON(
            try await Self.run(["types", "--format", "json"], subject: "shape-misc"), section: "types")
        let sleep = types.elements.first { $0["identifier"]?.text == "sleepAnalysis" }
        #expect(sleep?["values"]?.elements.first?["name"]?.text == "inBed")
        try OutputShapes.expectCSV(
            try await Self.run(["types", "--format", "csv"], subject: "shape-misc"), section: "types")
        _ = try await Self.run(
            ["admin", "create", "shape-reader", "--read", "stepCount,heartRate"], subject: "shape-misc")
        let list = try OutputShapes.expectJSON(
            try await Self.run(["admin", "list", "--format", "json"], subject: "shape-misc"), section: "admin list")
        let reader = try #require(list.elements.first { $0["name"]?.text == "shape-reader" })
        #expect(reader["read"].map { $0.elements.compactMap(\.text) } == ["stepCount", "heartRate"])
        try OutputShapes.expectCSV(
            try await Self.run(["admin", "list", "--format", "csv"], subject: "shape-misc"), section: "admin list")
        let deleted = try await Self.run(
            ["delete", "stepCount", "--from", "2026-11-01", "--to", "2026-11-02", "--format", "json"] + Self.newYork,
            subject: "shape-misc")
        #expect(try OutputShapes.expectJSON(deleted, section: "delete")["deleted"].map { "\($0)" } == "integer(2)")
    }

    /// A single-node server has no partitions; a cluster node's rows (rendered here from a made-up answer, the
    /// live cluster being IntegrationTests' ClusterTests) hold owners, sequences and lag, or nulls.
    @Test func clusterStatusShapes() async throws {
        let json = try await Self.run(["cluster", "status", "--format", "json"], subject: "shape-cluster")
        let single = try OutputShapes.expectJSON(json, section: "cluster status")
        #expect(single["partitions"]?.elements.isEmpty == true, "\(json)")
        try OutputShapes.expectCSV(
            try await Self.run(["cluster", "status", "--format", "csv"], subject: "shape-cluster"),
            section: "cluster status")
        // Partition 0 held by another node, 1 by the node asked (lagging by one), 2 by nobody, 3 by the node asked
        // without a renewal in time (no owner named).
        let owners = ["a", "b", "", ""]
        let leases: [ClusterStatus.Lease] = [.seen, .current, .free, .stale]
        let status = ClusterStatus(
            node: "b",
            partitions: owners.enumerated().map { index, owner in
                ClusterStatus.Partition(
                    index: UInt64(index), owner: owner, ownerAddress: owner.isEmpty ? "" : "127.0.0.1:742\(index)",
                    lastSequence: UInt64(3 - index), appliedSequence: owner == "b" ? 1 : 0,
                    messages: UInt64(3 - index), bytes: UInt64(100 * (3 - index)), replicas: 1, lease: leases[index])
            })
        let rows = try OutputShapes.expectJSON(
            ClusterStatusCommand.rendered(status, format: .json), section: "cluster status")["partitions"]?.elements
        #expect(rows?.count == 4)
        #expect(rows?.map { "\($0["lease"].map { "\($0)" } ?? "")" }.last == "string(\"stale\")")
        try OutputShapes.expectCSV(ClusterStatusCommand.rendered(status, format: .csv), section: "cluster status")
    }

    @Test func serverInfoAuthUnitsAndBackupShapes() async throws {
        try await Self.seed("shape-server")
        for format in ["json", "csv"] {
            let info = try await Self.run(["server-info", "--format", format], subject: "shape-server")
            let status = try await Self.run(
                ["auth", "status", "stepCount", "heartRate", "--format", format], subject: "shape-server")
            let units = try await Self.run(["units", "show", "km", "--format", format], subject: "shape-server")
            if format == "json" {
                let parsed = try OutputShapes.expectJSON(info, section: "server-info")
                #expect(parsed["samplesPerType"]?["stepCount"] != nil, "\(info)")
                #expect(try OutputShapes.expectJSON(status, section: "auth status").elements.count == 2)
                try OutputShapes.expectJSON(units, section: "units show")
            } else {
                try OutputShapes.expectCSV(info, section: "server-info")
                try OutputShapes.expectCSV(status, section: "auth status")
                try OutputShapes.expectCSV(units, section: "units show")
            }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hkq-backup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let backup = try await Self.run(
            ["admin", "backup", directory.path, "--format", "json"], subject: "shape-server")
        let rows = try OutputShapes.expectJSON(backup, section: "admin backup")
        #expect(rows.elements.first?["directory"]?.text == directory.path)
    }

    // MARK: DST

    /// A collection across a DST change: zone, bucket length, anchor (nil: the default), from and to (local).
    struct Case: Sendable, CustomTestStringConvertible {
        var zone: String
        var interval: String
        var anchor: String?
        var from: String
        var to: String
        var testDescription: String { "\(zone) \(interval) \(anchor ?? "") \(from)…\(to)" }
    }

    static let cases = [
        Case(zone: "America/New_York", interval: "1h", anchor: nil, from: "2026-10-31T23:00", to: "2026-11-01T03:00"),
        Case(zone: "America/New_York", interval: "15m", anchor: nil, from: "2026-11-01T00:45", to: "2026-11-01T02:15"),
        Case(
            zone: "America/New_York", interval: "1d", anchor: "2026-10-30T03:34", from: "2026-10-30T12:00",
            to: "2026-11-03T12:00"),
        Case(
            zone: "Australia/Lord_Howe", interval: "15m", anchor: nil, from: "2026-04-05T00:45", to: "2026-04-05T02:30"),
        Case(
            zone: "Australia/Lord_Howe", interval: "1h", anchor: nil, from: "2026-04-04T23:00", to: "2026-04-05T03:00"),
        Case(zone: "Pacific/Apia", interval: "1d", anchor: nil, from: "2011-12-28", to: "2012-01-01"),
    ]

    @Test("every bucket's printed start is distinct and is the instant the engine used", arguments: cases)
    func bucketsAcrossDST(_ testCase: Case) async throws {
        let live = try #require(LiveServer.current)
        let subject = "dst"
        var arguments = [
            "collection", "stepCount", "--interval", testCase.interval, "--tz", testCase.zone, "--from", testCase.from,
            "--through", testCase.to,
        ]
        if let anchor = testCase.anchor { arguments += ["--anchor", anchor] }
        let json = try await Self.run(arguments + ["--format", "json"], subject: subject)
        let buckets = try OutputShapes.expectJSON(json, section: "collection").elements
        let starts = buckets.compactMap { $0["start"]?.text }
        let ends = buckets.compactMap { $0["end"]?.text }

        // The engine's own buckets for the same query.
        let zone = try #require(TimeZone(identifier: testCase.zone))
        let dates = DateArgumentParser(timeZone: zone, now: fixedNow)
        let interval = try CalendarInterval(parsing: testCase.interval)
        let query = CollectionQuery(
            subject: subject, type: "stepCount", options: .cumulativeSum,
            anchor: try #require(dates.parse(testCase.anchor ?? "2000-01-01")), interval: interval,
            timeZone: testCase.zone, unit: "", enumerateFrom: dates.parse(testCase.from),
            enumerateTo: dates.parse(testCase.to))
        let client = HealthClient(
            ClientConfiguration(host: "127.0.0.1", port: Int(live.server.port), token: live.token, clientName: "test"))
        defer { client.close() }
        let engine = try await client.collection(query).buckets
        #expect(!engine.isEmpty)
        #expect(starts.map { ISO8601Text.timestamp($0) } == engine.map(\.start))
        #expect(ends.map { ISO8601Text.timestamp($0) } == engine.map(\.end))
        #expect(Set(starts).count == starts.count, "\(starts)")
        // Each offset is the zone's at that instant.
        for (text, bucket) in zip(starts, engine) {
            let seconds = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(bucket.start) / 1e6))
            #expect(ISO8601Text.parse(text)?.offsetSeconds == seconds, "\(text)")
        }
        // CSV says the same; table labels are distinct too.
        let csv = try OutputShapes.expectCSV(
            try await Self.run(arguments + ["--format", "csv"], subject: subject), section: "collection")
        #expect(csv.map { $0["start"] ?? "" } == starts)
        let table = try await Self.run(arguments, subject: subject)
        let lines = table.split(separator: "\n").map(String.init)
        let endColumn = try #require(lines.first?.range(of: "END")).lowerBound.utf16Offset(in: lines[0])
        let labels = lines.dropFirst().map { $0.prefix(endColumn).trimmingCharacters(in: .whitespaces) }
        #expect(labels.count == starts.count)
        #expect(Set(labels).count == labels.count, "\(table)")
        if testCase.anchor != nil { #expect(table.contains("03:34")) }
        if testCase.interval == "1h", testCase.zone == "America/New_York" {
            #expect(table.contains("2026-11-01 01:00 -04:00") && table.contains("2026-11-01 01:00 -05:00"), "\(table)")
        }
    }
}
