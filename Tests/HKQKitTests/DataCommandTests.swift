import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HKQKit

/// insert, samples, stats and server-info against the real hkd binary started for the suite.
///
/// Each test uses its own subject, so the order tests run in does not matter.
@Suite(.serialized, .liveServer) struct DataCommandTests {
    /// Inserts CSV `rows` (after the standard header) for `subject`, expecting success.
    @discardableResult
    static func insert(_ rows: [String], subject: String, name: String = "rows.csv") async throws -> RunResult {
        let live = try #require(LiveServer.current)
        let path = try live.file(name, "type,start,end,value,unit,source\n" + rows.joined(separator: "\n") + "\n")
        let result = try await runLive(["insert", path], subject: subject)
        #expect(result.status == 0, "\(result.err)")
        return result
    }

    /// The `samples` JSON output as objects.
    static func samples(_ arguments: [String], subject: String) async throws -> [[String: Any]] {
        let result = try await runLive(["samples"] + arguments + ["--format", "json", "--tz", "UTC"], subject: subject)
        #expect(result.status == 0, "\(result.err)")
        return try json(result.out)
    }

    // MARK: insert

    @Test func insertCSVPrintsRowsPerTypeAndStoresThem() async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file(
            "walk.csv",
            """
            type,start,end,value,unit,source
            stepCount,2024-03-10T08:00:00-05:00,2024-03-10T08:10:00-05:00,1200,count,iPhone
            distanceWalkingRunning,2024-03-10T08:00:00-05:00,2024-03-10T08:10:00-05:00,0.9,km,iPhone
            stepCount,2024-03-10T08:10:00-05:00,2024-03-10T08:20:00-05:00,950,,"Anna's Watch, Series 9"

            """)
        let result = try await runLive(["insert", path], subject: "insert-csv")
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(
            result.out == """
                TYPE                    ROWS  INSERTED  ALREADY STORED
                stepCount                  2         2               0
                distanceWalkingRunning     1         1               0
                inserted 3 new samples from \(path) (3 rows, 0 already stored)

                """)
        let stored = try await Self.samples(["stepCount,distanceWalkingRunning"], subject: "insert-csv")
        #expect(stored.map { $0["type"] as? String } == ["stepCount", "distanceWalkingRunning", "stepCount"])
        #expect(stored.map { $0["value"] as? Double } == [1200, 900, 950])
        #expect(stored.map { $0["source"] as? String } == ["iPhone", "iPhone", "Anna's Watch, Series 9"])
        #expect(stored.first?["start"] as? String == "2024-03-10T13:00:00Z")
        let json = try await runLive(["insert", path, "--format", "json"], subject: "insert-csv-json")
        let counts: [[String: Any]] = try HKQKitTests.json(json.out)
        #expect(counts.map { $0["type"] as? String } == ["stepCount", "distanceWalkingRunning"])
        #expect(counts.map { $0["rows"] as? Int } == [2, 1])
        #expect(counts.map { $0["inserted"] as? Int } == [2, 1])
    }

    @Test func insertingOneValueInAnotherUnitAddsNothing() async throws {
        let at = "2024-03-10T08:00:00-05:00,2024-03-10T08:10:00-05:00"
        try await Self.insert(
            ["distanceWalkingRunning,\(at),1,km,iPhone", "activeEnergyBurned,\(at),10,kcal,iPhone"],
            subject: "insert-units")
        let again = try await Self.insert(
            [
                "distanceWalkingRunning,\(at),1000,m,iPhone",
                "distanceWalkingRunning,\(at),0.621371192237334,mi,iPhone",
                "activeEnergyBurned,\(at),41.84,kJ,iPhone",
            ],
            subject: "insert-units", name: "units-again.csv")
        // 1000 m and 0.62137… mi are one value: identical rows of the file.
        #expect(again.out.contains("(3 rows, 2 already stored, 1 identical row counted once)"), "\(again.out)")
        // One digit more in the 6th place is another sample.
        let other = try await Self.insert(["distanceWalkingRunning,\(at),1.00001,km,iPhone"], subject: "insert-units")
        #expect(other.out.contains("inserted 1 new sample from "), "\(other.out)")
        #expect(other.out.hasSuffix("rows.csv (1 row, 0 already stored)\n"), "\(other.out)")
        let stored = try await Self.samples(["distanceWalkingRunning"], subject: "insert-units")
        #expect(stored.map { $0["value"] as? Double } == [1000, 1000.01])
    }

    @Test func identicalRowsOfAFileAreCountedOnce() async throws {
        let row = "stepCount,2024-03-10T08:00:00-05:00,2024-03-10T08:10:00-05:00,1200,count,iPhone"
        let result = try await Self.insert(
            [row, row, row.replacingOccurrences(of: "1200", with: "1201")], subject: "insert-twice")
        #expect(
            result.out.hasSuffix("rows.csv (3 rows, 0 already stored, 1 identical row counted once)\n"),
            "\(result.out)")
        #expect(result.out.contains("inserted 2 new samples"), "\(result.out)")
        let help = try await runLive(["insert", "--help"], subject: "insert-twice")
        #expect(help.out.contains("identical rows counted once"), "\(help.out)")
    }

    @Test func insertJSONLines() async throws {
        let live = try #require(LiveServer.current)
        let path = try live.file(
            "hr.jsonl",
            """
            {"type":"heartRate","start":"2024-03-10T08:00:00Z","end":"2024-03-10T08:00:00Z","value":72,"unit":"count/min","source":"Watch"}
            {"type":"heartRate","start":"2024-03-10T08:01:00.5Z","value":1.5,"unit":"count/s","source":"Watch","uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}
            """)
        let result = try await runLive(["insert", path, "--format", "csv"], subject: "insert-jsonl")
        #expect(result.status == 0)
        #expect(result.out == "type,rows,inserted,alreadyStored\nheartRate,2,2,0\n")
        let stored = try await Self.samples(["heartRate"], subject: "insert-jsonl")
        #expect(stored.map { $0["value"] as? Double } == [72, 90])
        #expect(stored.last?["uuid"] as? String == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(stored.last?["start"] as? String == "2024-03-10T08:01:00.5Z")
    }

    @Test func insertReadsStandardInputThroughTheBinary() async throws {
        let live = try #require(LiveServer.current)
        let lines = """
            {"type":"bodyMass","start":"2024-03-10T08:00:00Z","value":70.5,"unit":"kg","source":"Scale"}
            {"type":"bodyMass","start":"2024-03-11T08:00:00Z","value":154,"unit":"lb","source":"Scale"}
            """
        let (status, out, err) = try await BinaryTests.run(
            [
                "insert", "-", "--server", live.address, "--token", live.token, "--subject", "insert-stdin", "--format",
                "json",
            ], input: lines)
        #expect(status == 0, "\(err)")
        let counts: [[String: Any]] = try json(out)
        #expect(counts.first?["type"] as? String == "bodyMass")
        #expect(counts.first?["inserted"] as? Int == 2)
        let stored = try await Self.samples(["bodyMass"], subject: "insert-stdin")
        #expect(stored.map { $0["unit"] as? String } == ["kg", "kg"])
        #expect(abs((stored.last?["value"] as? Double ?? 0) - 69.853_225) < 1e-6)
    }

    @Test func insertStreamsLargeFilesInBatches() async throws {
        let rows = (0..<25_001).map { row in
            "stepCount,2024-03-10T00:00:00Z,2024-03-10T00:00:00Z,\(row),count,src\(row % 2)"
        }
        let result = try await Self.insert(rows, subject: "insert-large", name: "large.csv")
        #expect(
            result.out.hasPrefix(
                "TYPE        ROWS  INSERTED  ALREADY STORED\nstepCount  25001     25001               0\n"))
        let stats = try await runLive(
            ["stats", "stepCount", "--options", "by-source", "--format", "json", "--tz", "UTC"], subject: "insert-large"
        )
        let object: [String: Any] = try json(stats.out)
        let sources = try #require(object["sources"] as? [[String: Any]])
        let sums = Dictionary(
            uniqueKeysWithValues: sources.map { ($0["source"] as? String ?? "", $0["sum"] as? Double) })
        #expect(sums == ["src0": 12_500 * 12_501, "src1": 12_500 * 12_500])
    }

    @Test(arguments: [
        (
            "stepCount,2024-03-10T08:00:00Z,,5,,a\nstepCont,2024-03-10T08:00:00Z,,5,,a",
            #"line 3: unknown quantity type "stepCont"; did you mean "stepCount"?"#
        ),
        ("stepCount,2024-03-10T08:00:00Z,,5,kg,a", #"line 2: unit "kg" is not compatible with stepCount (count)"#),
        (
            "stepCount,2024-03-10T09:00:00Z,2024-03-10T08:00:00Z,5,,a",
            "line 2: start 2024-03-10T09:00:00Z is after end 2024-03-10T08:00:00Z"
        ),
    ])
    func insertRejectsABadLineAndGoesOn(rows: String, message: String) async throws {
        let live = try #require(LiveServer.current)
        let subject = "insert-bad-\(abs(message.hashValue))"
        let path = try live.file("bad.csv", "type,start,end,value,unit,source\n" + rows + "\n" + Self.goodRow + "\n")
        let result = try await runLive(["insert", path], subject: subject)
        #expect(result.status == 3, "some rows rejected: \(result.err)")
        #expect(result.err == "\(path) \(message)\n")
        #expect(result.out.contains("1 rejected)"), "\(result.out)")
        // The good rows, before and after the bad one, are stored.
        let stored = try await Self.samples(["stepCount"], subject: subject)
        #expect(stored.count == rows.split(separator: "\n").count)
    }

    /// A valid row after the bad ones.
    static let goodRow = "stepCount,2024-03-10T11:00:00Z,,7,,a"

    // MARK: samples

    /// stepCount of `subject`, in UTC on 2024-03-10:
    /// E 09:50–10:40 W 40, A 10:00–10:10 P 100, B 10:10–10:20 P 200, C 10:20–10:30 W 300, D 10:25 point W 50.
    static func insertQueryData(subject: String) async throws {
        try await insert(
            [
                "stepCount,2024-03-10T10:00:00Z,2024-03-10T10:10:00Z,100,count,Phone",
                "stepCount,2024-03-10T10:10:00Z,2024-03-10T10:20:00Z,200,count,Phone",
                "stepCount,2024-03-10T10:20:00Z,2024-03-10T10:30:00Z,300,count,Watch",
                "stepCount,2024-03-10T10:25:00Z,2024-03-10T10:25:00Z,50,count,Watch",
                "stepCount,2024-03-10T09:50:00Z,2024-03-10T10:40:00Z,40,count,Watch",
                "distanceWalkingRunning,2024-03-10T10:00:00Z,2024-03-10T10:10:00Z,1.5,km,Phone",
            ], subject: subject)
    }

    /// The values of the stepCount samples `arguments` select, in output order.
    static func stepValues(_ arguments: [String], subject: String) async throws -> [Double] {
        try await samples(["stepCount"] + arguments, subject: subject).compactMap { $0["value"] as? Double }
    }

    @Test func samplesDatePredicateFlags() async throws {
        try await Self.insertQueryData(subject: "query-dates")
        let range = ["--from", "2024-03-10T10:10:00Z", "--to", "2024-03-10T10:25:00Z"]
        #expect(try await Self.stepValues([], subject: "query-dates") == [40, 100, 200, 300, 50])
        #expect(try await Self.stepValues(range, subject: "query-dates") == [40, 100, 200, 300])
        #expect(try await Self.stepValues(range + ["--strict-start"], subject: "query-dates") == [200, 300])
        #expect(try await Self.stepValues(range + ["--strict-end"], subject: "query-dates") == [100, 200])
        #expect(try await Self.stepValues(range + ["--strict-start", "--strict-end"], subject: "query-dates") == [200])
        #expect(try await Self.stepValues(["--from", "2024-03-10T10:30:00Z"], subject: "query-dates") == [40, 300])
        #expect(try await Self.stepValues(["--to", "2024-03-10T10:00:00Z"], subject: "query-dates") == [40])
        // A local time read in --tz: 15:55 in Kolkata is 10:25 UTC.
        let local = try await runLive(
            [
                "samples", "stepCount", "--from", "2024-03-10T15:55", "--tz", "Asia/Kolkata", "--strict-start",
                "--format", "json",
            ], subject: "query-dates")
        let objects: [[String: Any]] = try json(local.out)
        #expect(objects.map { $0["value"] as? Double } == [50])
        #expect(objects.first?["start"] as? String == "2024-03-10T15:55:00+05:30")
    }

    @Test func samplesSourcesLimitsAndSorts() async throws {
        try await Self.insertQueryData(subject: "query-sorts")
        #expect(try await Self.stepValues(["--source", "Watch"], subject: "query-sorts") == [40, 300, 50])
        #expect(
            try await Self.stepValues(["--source", "Watch", "--source", "Phone"], subject: "query-sorts") == [
                40, 100, 200, 300, 50,
            ])
        #expect(try await Self.stepValues(["--source", "Nobody"], subject: "query-sorts") == [])
        #expect(try await Self.stepValues(["--limit", "2"], subject: "query-sorts") == [40, 100])
        #expect(try await Self.stepValues(["--sort", "-start"], subject: "query-sorts") == [50, 300, 200, 100, 40])
        #expect(try await Self.stepValues(["--sort", "end"], subject: "query-sorts") == [100, 200, 50, 300, 40])
        #expect(try await Self.stepValues(["--sort", "-end", "--limit", "2"], subject: "query-sorts") == [40, 300])
        // Several types merge in sort order; --limit counts rows in all.
        let both = try await Self.samples(
            ["stepCount,distanceWalkingRunning", "--sort", "start", "--limit", "3"], subject: "query-sorts")
        #expect(both.map { $0["type"] as? String } == ["stepCount", "stepCount", "distanceWalkingRunning"])
        let bad = try await runLive(["samples", "stepCount", "--sort", "sideways"], subject: "query-sorts")
        #expect(bad.status == 64)
        #expect(
            bad.err.hasPrefix("error: invalid value 'sideways' for '--sort'; expected start, -start, end or -end\n"))
        let negative = try await runLive(["samples", "stepCount", "--limit", "-1"], subject: "query-sorts")
        #expect(negative.status == 64)
    }

    @Test func samplesPagesWithAfter() async throws {
        try await Self.insertQueryData(subject: "query-pages")
        /// One page: the values listed and the token the hint names (nil without a hint).
        func page(_ arguments: [String]) async throws -> (values: [Double], token: String?) {
            let result = try await runLive(
                ["samples", "stepCount", "--format", "json", "--tz", "UTC"] + arguments, subject: "query-pages")
            #expect(result.status == 0, "\(result.err)")
            let objects: [[String: Any]] = try json(result.out)
            guard !result.err.isEmpty else { return (objects.compactMap { $0["value"] as? Double }, nil) }
            let prefix = "hint: more samples follow; continue with --after "
            #expect(result.err.hasPrefix(prefix) && result.err.hasSuffix("\n"), "\(result.err)")
            let token = String(result.err.dropFirst(prefix.count).dropLast())
            return (objects.compactMap { $0["value"] as? Double }, token)
        }
        for (sort, expected) in [("start", [40.0, 100, 200, 300, 50]), ("-end", [40, 300, 50, 200, 100])] {
            var values: [Double] = []
            var after: String?
            repeat {
                let next = try await page(["--sort", sort, "--limit", "2"] + (after.map { ["--after", $0] } ?? []))
                values += next.values
                after = next.token
                #expect(next.values.count == (after == nil ? 1 : 2))
            } while after != nil && values.count < 10
            #expect(values == expected, "\(sort)")
        }
        // A limit that is not reached gives no hint; --after without a limit lists the rest.
        #expect(try await page(["--limit", "5"]).token == nil)
        let first = try await page(["--limit", "3"])
        #expect(try await page(["--after", try #require(first.token)]) == ([300, 50], nil))

        let garbled = try await runLive(["samples", "stepCount", "--after", "not a token"], subject: "query-pages")
        #expect(garbled.status == 64)
        #expect(garbled.err.hasPrefix("error: invalid value 'not a token' for '--after'; expected a page token"))
        let twoTypes = try await runLive(
            ["samples", "stepCount,distanceWalkingRunning", "--after", try #require(first.token)],
            subject: "query-pages")
        #expect(twoTypes.status == 64)
        #expect(twoTypes.err.hasPrefix("error: --after continues the samples of one type"))
        let otherSort = try await runLive(
            ["samples", "stepCount", "--sort", "end", "--after", try #require(first.token)], subject: "query-pages")
        #expect(otherSort.status != 0)
        #expect(otherSort.err.contains("the page token continues a query sorted by start, not by end"))
        // Several types cut by the limit give no hint: a token continues one type.
        let both = try await runLive(
            ["samples", "stepCount,distanceWalkingRunning", "--limit", "2"], subject: "query-pages")
        #expect(both.status == 0 && both.err.isEmpty, "\(both.err)")
    }

    @Test func samplesStatsAndCollectionByUUID() async throws {
        try await Self.insertQueryData(subject: "query-uuids")
        let all = try await Self.samples(["stepCount"], subject: "query-uuids")
        let uuids = all.compactMap { $0["uuid"] as? String }
        #expect(uuids.count == 5)
        // Seeded choice of two of the five, so a failure repeats.
        var random = SplitMix64(seed: 0x5eed_0001)
        let picked = Array(uuids.shuffled(using: &random).prefix(2))
        let wanted = all.filter { picked.contains($0["uuid"] as? String ?? "") }.compactMap { $0["value"] as? Double }
        let chosen = try await Self.stepValues(
            ["--uuid", picked[0], "--uuid", picked[1].lowercased()], subject: "query-uuids")
        #expect(chosen == wanted)
        #expect(try await Self.stepValues(["--uuid", UUID().uuidString], subject: "query-uuids") == [])
        let stats = try await Self.stats(
            ["stepCount", "--options", "sum", "--uuid", picked[0], "--uuid", picked[1]], subject: "query-uuids")
        #expect(stats["sum"] as? Double == wanted.reduce(0, +))
        let buckets = try await runLive(
            [
                "collection", "stepCount", "--interval", "1d", "--tz", "UTC", "--format", "json", "--uuid", picked[0],
                "--uuid", picked[1],
            ], subject: "query-uuids")
        #expect(buckets.status == 0, "\(buckets.err)")
        let days: [[String: Any]] = try json(buckets.out)
        #expect(days.compactMap { $0["sum"] as? Double } == [wanted.reduce(0, +)])
        let bad = try await runLive(["samples", "stepCount", "--uuid", "not-a-uuid"], subject: "query-uuids")
        #expect(bad.status == 64)
        #expect(bad.err.hasPrefix("error: invalid UUID 'not-a-uuid' for '--uuid'; expected 8-4-4-4-12 hex digits\n"))
    }

    @Test func collectionTakesTheSamplePredicateOptions() async throws {
        try await Self.insertQueryData(subject: "collection-predicates")
        func sums(_ arguments: [String]) async throws -> [Double?] {
            let result = try await runLive(
                ["collection", "stepCount", "--interval", "1h", "--tz", "UTC", "--format", "json"] + arguments,
                subject: "collection-predicates")
            #expect(result.status == 0, "\(result.err)")
            let buckets: [[String: Any]] = try json(result.out)
            return buckets.map { $0["sum"] as? Double }
        }
        let range = ["--from", "2024-03-10T10:10:00Z", "--to", "2024-03-10T10:25:00Z"]
        // E (40 over 09:50–10:40) is pro-rated: 8 in the 09:00 hour, 32 in the 10:00 hour.
        let open = try await sums([])
        #expect(open.count == 2 && open.first == 8)
        #expect(try await sums(["--source", "Phone"]) == [300])
        #expect(try await sums(["--source", "Watch"]) == [8, 382])
        // Listing only the 10:00 bucket; without a strict option every sample overlapping it counts, as before.
        #expect(try await sums(range) == [open.last ?? nil])
        // Strict start: B 200, C 300, D 50 start at or after 10:10; strict end: A… end before 10:25: B only.
        #expect(try await sums(range + ["--strict-start"]) == [550])
        #expect(try await sums(range + ["--strict-end"]) == [300])
        #expect(try await sums(range + ["--strict-start", "--strict-end"]) == [200])
        let lone = try await runLive(["collection", "stepCount", "--strict-start"], subject: "collection-predicates")
        #expect(lone.status == 64)
        #expect(lone.err.hasPrefix("error: --strict-start and --strict-end need --from and --through\n"))
    }

    @Test func valueBoundsInSamplesStatsAndCollection() async throws {
        try await Self.insertQueryData(subject: "query-values")
        #expect(try await Self.stepValues(["--min", "100"], subject: "query-values") == [100, 200, 300])
        #expect(try await Self.stepValues(["--max", "100"], subject: "query-values") == [40, 100, 50])
        #expect(
            try await Self.stepValues(["--min", "50 count", "--max", "200 count"], subject: "query-values") == [
                100, 200, 50,
            ])
        #expect(
            try await Self.stepValues(["--min", "100", "--source", "Watch"], subject: "query-values") == [300])
        // Bounds in the unit values print in, or in the unit they name; stored 1500 m.
        let km = try await Self.samples(
            ["distanceWalkingRunning", "--unit", "km", "--min", "1.5"], subject: "query-values")
        #expect(km.map { $0["value"] as? Double } == [1.5])
        #expect(try await Self.samples(["distanceWalkingRunning", "--min", "1.6km"], subject: "query-values").isEmpty)
        #expect(
            try await Self.samples(["distanceWalkingRunning", "--max", "1 mi"], subject: "query-values").count == 1)
        let stats = try await Self.stats(
            ["stepCount", "--options", "sum", "--source", "Phone", "--max", "150"], subject: "query-values")
        #expect(stats["sum"] as? Double == 100)
        let buckets = try await runLive(
            ["collection", "stepCount", "--interval", "1d", "--tz", "UTC", "--format", "json", "--min", "300"],
            subject: "query-values")
        #expect(buckets.status == 0, "\(buckets.err)")
        let days: [[String: Any]] = try json(buckets.out)
        #expect(days.compactMap { $0["sum"] as? Double } == [300])
        let wrongUnit = try await runLive(["samples", "stepCount", "--min", "1 kg"], subject: "query-values")
        #expect(wrongUnit.status == 65)
        #expect(wrongUnit.err == "error: unit \"kg\" is not compatible with stepCount (count)\n")
        let empty = try await runLive(["samples", "stepCount", "--min", "5", "--max", "4"], subject: "query-values")
        #expect(empty.status == 65)
        #expect(empty.err.hasPrefix("error: the value bounds are empty"), "\(empty.err)")
        let bad = try await runLive(["samples", "stepCount", "--min", "lots"], subject: "query-values")
        #expect(bad.status == 64)
        let mixed = try await runLive(
            ["samples", "stepCount", "--min", "5", "--max", "9 count"], subject: "query-values")
        #expect(mixed.status == 64)
        #expect(mixed.err.hasPrefix("error: --min, --max and --where name different units ('', 'count')"))
    }

    @Test("--where states strict and equal comparisons; with --min and --max every one must hold")
    func whereComparisons() async throws {
        try await Self.insertQueryData(subject: "query-where")
        func values(_ arguments: [String]) async throws -> [Double] {
            try await Self.stepValues(arguments, subject: "query-where")
        }
        #expect(try await values(["--where", "value > 100"]) == [200, 300])
        #expect(try await values(["--where", "value >= 100", "--where", "value<300"]) == [100, 200])
        #expect(try await values(["--where", "== 50"]) == [50])
        #expect(try await values(["--min", "100", "--where", "value > 100"]) == [200, 300], "the strict bound wins")
        #expect(try await values(["--max", "200", "--where", "value <= 300"]) == [40, 100, 200, 50])
        let km = try await Self.samples(
            ["distanceWalkingRunning", "--where", "value < 1.5 km"], subject: "query-where")
        #expect(km.isEmpty, "1500 m is not below 1.5 km")
        let bad = try await runLive(["samples", "stepCount", "--where", "value ~ 5"], subject: "query-where")
        #expect(bad.status == 64)
        #expect(bad.err.hasPrefix("error: invalid predicate 'value ~ 5' for '--where'; expected 'value OP NUMBER"))
    }

    @Test func samplesUnits() async throws {
        try await Self.insertQueryData(subject: "query-units")
        let meters = try await Self.samples(["distanceWalkingRunning"], subject: "query-units")
        #expect(meters.first?["value"] as? Double == 1500)
        #expect(meters.first?["unit"] as? String == "m")
        let miles = try await Self.samples(["distanceWalkingRunning", "--unit", "mi"], subject: "query-units")
        #expect(abs((miles.first?["value"] as? Double ?? 0) - 0.932_056_788) < 1e-8)
        #expect(miles.first?["unit"] as? String == "mi")
        let perType = try await Self.samples(
            ["distanceWalkingRunning,stepCount", "--unit", "distanceWalkingRunning=km", "--limit", "2"],
            subject: "query-units")
        #expect(perType.map { $0["unit"] as? String } == ["count", "km"])
        let wrong = try await runLive(["samples", "stepCount", "--unit", "kg"], subject: "query-units")
        #expect(wrong.status == 65)
        #expect(wrong.err == "error: unit \"kg\" is not compatible with stepCount (count)\n")
        let stray = try await runLive(["samples", "stepCount", "--unit", "heartRate=count/s"], subject: "query-units")
        #expect(stray.status == 64)
        #expect(stray.err.hasPrefix("error: --unit names 'heartRate', which is not among the types queried\n"))
        let unknown = try await runLive(["samples", "stepz"], subject: "query-units")
        #expect(unknown.status == 65)
        #expect(unknown.err == "error: unknown quantity type \"stepz\"\n")
    }

    @Test func samplesTableAndCSV() async throws {
        try await Self.insertQueryData(subject: "query-output")
        let table = try await runLive(
            ["samples", "stepCount", "--source", "Phone", "--tz", "America/New_York"], subject: "query-output")
        #expect(
            table.out == """
                TYPE       START                       END                         VALUE  UNIT   SOURCE
                stepCount  2024-03-10 06:00:00 -04:00  2024-03-10 06:10:00 -04:00    100  count  Phone
                stepCount  2024-03-10 06:10:00 -04:00  2024-03-10 06:20:00 -04:00    200  count  Phone

                """)
        let csv = try await runLive(
            ["samples", "stepCount", "--format", "csv", "--tz", "UTC", "--limit", "1"], subject: "query-output")
        let lines = csv.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "type,start,end,value,unit,source,uuid")
        let fields = try #require(lines.dropFirst().first.flatMap(CSV.fields))
        #expect(
            Array(fields.prefix(6)) == [
                "stepCount", "2024-03-10T09:50:00Z", "2024-03-10T10:40:00Z", "40", "count", "Watch",
            ])
        #expect(UUID(uuidString: fields[6]) != nil)
    }

    @Test func samplesJoinedPerInterval() async throws {
        try await Self.insert(
            [
                "stepCount,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,1200,count,iPhone",
                "distanceWalkingRunning,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,0.9,km,iPhone",
                "stepCount,2024-03-10T08:10:00Z,2024-03-10T08:20:00Z,950,count,iPhone",
                "distanceWalkingRunning,2024-03-10T08:10:00Z,2024-03-10T08:20:00Z,0.7,km,iPhone",
                "stepCount,2024-03-10T08:20:00Z,2024-03-10T08:30:00Z,80,count,iPhone",
                "distanceWalkingRunning,2024-03-10T08:30:00Z,2024-03-10T08:40:00Z,0.1,km,iPhone",
            ], subject: "join")
        let rows = try await Self.samples(
            ["stepCount,distanceWalkingRunning", "--join", "interval", "--unit", "distanceWalkingRunning=km"],
            subject: "join")
        #expect(rows.count == 4)
        #expect(
            rows.map { Set($0.keys) }
                == Array(repeating: ["start", "end", "source", "stepCount", "distanceWalkingRunning"], count: 4))
        #expect(
            rows.map { $0["start"] as? String } == [
                "2024-03-10T08:00:00Z", "2024-03-10T08:10:00Z", "2024-03-10T08:20:00Z",
                "2024-03-10T08:30:00Z",
            ])
        #expect(rows.map { $0["stepCount"] as? Double } == [1200, 950, 80, nil])
        #expect(rows.map { $0["distanceWalkingRunning"] as? Double } == [0.9, 0.7, nil, 0.1])
        #expect(rows[2]["distanceWalkingRunning"] is NSNull)
        let table = try await runLive(
            ["samples", "stepCount,distanceWalkingRunning", "--join", "interval", "--tz", "UTC", "--limit", "2"],
            subject: "join")
        #expect(
            table.out == """
                START                       END                         SOURCE  stepCount (count)  distanceWalkingRunning (m)
                2024-03-10 08:00:00 +00:00  2024-03-10 08:10:00 +00:00  iPhone               1200                         900
                2024-03-10 08:10:00 +00:00  2024-03-10 08:20:00 +00:00  iPhone                950                         700

                """)
    }

    @Test func samplesJoinedPerIntervalKeepEverySample() async throws {
        try await Self.insert(
            [
                "stepCount,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,1200,count,iPhone",
                "stepCount,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,1300,count,iPhone",
                "stepCount,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,1400,count,iPhone",
                "distanceWalkingRunning,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,0.9,km,iPhone",
                "stepCount,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,500,count,Watch",
                "stepCount,2024-03-10T08:10:00Z,2024-03-10T08:20:00Z,950,count,iPhone",
            ], subject: "join-twins")
        let result = try await runLive(
            [
                "samples", "stepCount,distanceWalkingRunning", "--join", "interval", "--format", "json", "--tz", "UTC",
            ], subject: "join-twins")
        #expect(result.status == 0)
        #expect(result.err == "", "no sample is left out, so nothing to warn about")
        let rows: [[String: Any]] = try json(result.out)
        let iPhone8 = rows.filter {
            $0["source"] as? String == "iPhone" && $0["start"] as? String == "2024-03-10T08:00:00Z"
        }
        #expect(rows.count == 5)
        #expect(Set(iPhone8.compactMap { $0["stepCount"] as? Double }) == [1200, 1300, 1400])
        #expect(iPhone8.compactMap { $0["distanceWalkingRunning"] as? Double } == [900])
        #expect(iPhone8.first?["distanceWalkingRunning"] as? Double == 900, "the first row of the interval fills first")
        let watch = rows.filter { $0["source"] as? String == "Watch" }
        #expect(watch.map { $0["stepCount"] as? Double } == [500])
        #expect(rows.last?["stepCount"] as? Double == 950, "rows stay in start order")
        let limited = try await runLive(
            ["samples", "stepCount,distanceWalkingRunning", "--join", "interval", "--format", "json", "--limit", "2"],
            subject: "join-twins")
        let two: [[String: Any]] = try json(limited.out)
        #expect(two.count == 2)
    }

    // MARK: stats

    /// `subject`, 2024-03-10 UTC: steps Phone 10:00–10:10 100, 10:10–10:20 200, Watch 10:30–10:40 300;
    /// bodyMass Scale 70 kg at 08:00, 72 at 09:00, 71 at 10:00.
    static func insertStatsData(subject: String) async throws {
        try await insert(
            [
                "stepCount,2024-03-10T10:00:00Z,2024-03-10T10:10:00Z,100,count,Phone",
                "stepCount,2024-03-10T10:10:00Z,2024-03-10T10:20:00Z,200,count,Phone",
                "stepCount,2024-03-10T10:30:00Z,2024-03-10T10:40:00Z,300,count,Watch",
                "bodyMass,2024-03-10T08:00:00Z,,70,kg,Scale",
                "bodyMass,2024-03-10T09:00:00Z,,72,kg,Scale",
                "bodyMass,2024-03-10T10:00:00Z,,71,kg,Scale",
            ], subject: subject)
    }

    /// The JSON object `stats` prints for `subject`.
    static func stats(_ arguments: [String], subject: String) async throws -> [String: Any] {
        let result = try await runLive(["stats"] + arguments + ["--format", "json", "--tz", "UTC"], subject: subject)
        #expect(result.status == 0, "\(result.err)")
        return try json(result.out)
    }

    @Test func statsEachOption() async throws {
        try await Self.insertStatsData(subject: "stats-options")
        let sum = try await Self.stats(["stepCount", "--options", "sum,duration"], subject: "stats-options")
        #expect(sum["type"] as? String == "stepCount" && sum["unit"] as? String == "count")
        #expect(sum["sum"] as? Double == 600)
        #expect(sum["duration"] as? Double == 1800)
        #expect(sum["start"] as? String == "2024-03-10T10:00:00Z")
        #expect(sum["end"] as? String == "2024-03-10T10:40:00Z")
        #expect(Set(sum.keys) == ["type", "unit", "start", "end", "sum", "duration"])
        let mass = try await Self.stats(
            ["bodyMass", "--options", "discreteAverage", "--options", "min,MAX,recent"], subject: "stats-options")
        #expect(mass["average"] as? Double == 71)
        #expect(mass["minimum"] as? Double == 70)
        #expect(mass["maximum"] as? Double == 72)
        #expect(mass["mostRecent"] as? Double == 71)
        #expect(mass["mostRecentStart"] as? String == "2024-03-10T10:00:00Z")
        let pounds = try await Self.stats(["bodyMass", "--options", "avg", "--unit", "lb"], subject: "stats-options")
        #expect(pounds["unit"] as? String == "lb")
        #expect(abs((pounds["average"] as? Double ?? 0) - 156.528_206_151) < 1e-6)
        let defaults = try await Self.stats(["bodyMass"], subject: "stats-options")
        #expect(Set(defaults.keys) == ["type", "unit", "start", "end", "average", "minimum", "maximum"])
        let ranged = try await Self.stats(
            ["stepCount", "--from", "2024-03-10T10:15:00Z", "--strict-start"], subject: "stats-options")
        #expect(ranged["sum"] as? Double == 300)
        let filtered = try await Self.stats(
            ["stepCount", "--source", "Phone", "--options", "cumulativeSum"], subject: "stats-options")
        #expect(filtered["sum"] as? Double == 300)
    }

    @Test func statsBySource() async throws {
        try await Self.insertStatsData(subject: "stats-sources")
        let object = try await Self.stats(
            ["stepCount", "--options", "sum,duration,by-source"], subject: "stats-sources")
        #expect(object["sum"] as? Double == 600)
        let sources = try #require(object["sources"] as? [[String: Any]])
        let bySource = Dictionary(uniqueKeysWithValues: sources.map { ($0["source"] as? String ?? "", $0) })
        #expect(Set(bySource.keys) == ["Phone", "Watch"])
        #expect(bySource["Phone"]?["sum"] as? Double == 300)
        #expect(bySource["Phone"]?["duration"] as? Double == 1200)
        #expect(bySource["Watch"]?["sum"] as? Double == 300)
        let table = try await runLive(
            ["stats", "stepCount", "--options", "sum,duration,separateBySource", "--tz", "UTC", "--source", "Phone"],
            subject: "stats-sources")
        #expect(
            table.out == """
                TYPE      stepCount
                UNIT      count
                START     2024-03-10 10:00:00 +00:00
                END       2024-03-10 10:20:00 +00:00
                SUM       300
                DURATION  20m

                SOURCE  SUM  DURATION
                Phone   300  20m

                """)
        let csv = try await runLive(
            ["stats", "stepCount", "--options", "sum,by-source", "--tz", "UTC", "--format", "csv"],
            subject: "stats-sources")
        let lines = csv.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "type,unit,start,end,source,sum")
        #expect(lines.dropFirst().first == "stepCount,count,2024-03-10T10:00:00Z,2024-03-10T10:40:00Z,,600")
        #expect(
            Set(lines.dropFirst(2)) == [
                "stepCount,count,2024-03-10T10:00:00Z,2024-03-10T10:40:00Z,Phone,300",
                "stepCount,count,2024-03-10T10:00:00Z,2024-03-10T10:40:00Z,Watch,300",
            ])
    }

    @Test func statsWithDateKeywordsUseTheInjectedNow() async throws {
        try await Self.insertStatsData(subject: "stats-dates")
        // now is 2024-03-10T15:00:00Z: today in UTC starts at 00:00Z, in Tokyo (+09:00) at 2024-03-10T15:00Z.
        #expect(
            try await Self.stats(["stepCount", "--from", "today"], subject: "stats-dates")["sum"] as? Double == 600)
        #expect(
            try await Self.stats(["stepCount", "--from", "now-270m", "--strict-start"], subject: "stats-dates")["sum"]
                as? Double == 300)
        let tokyo = try await runLive(
            ["stats", "stepCount", "--from", "today", "--tz", "Asia/Tokyo"], subject: "stats-dates")
        #expect(tokyo.status == 2)
        #expect(tokyo.out == "")
        #expect(tokyo.err == "no stepCount data for subject \"stats-dates\" since 2024-03-11 00:00:00 +09:00\n")
    }

    @Test func statsNoDataAndErrors() async throws {
        try await Self.insertStatsData(subject: "stats-errors")
        let none = try await runLive(
            ["stats", "stepCount", "--from", "yesterday", "--to", "2024-03-10T09:00:00Z", "--tz", "UTC"],
            subject: "stats-errors")
        #expect(none.status == 2)
        #expect(
            none.err
                == "no stepCount data for subject \"stats-errors\" between 2024-03-09 00:00:00 +00:00 and 2024-03-10 09:00:00 +00:00\n"
        )
        let nobody = try await runLive(["stats", "heartRate", "--source", "Ring"], subject: "nobody")
        #expect(nobody.status == 2)
        #expect(nobody.err == "no heartRate data for subject \"nobody\" at any time from \"Ring\"\n")
        let mismatch = try await runLive(["stats", "stepCount", "--options", "avg"], subject: "stats-errors")
        #expect(mismatch.status == 65)
        #expect(mismatch.err == "error: discreteAverage is not valid for cumulative type stepCount\n")
        let unknown = try await runLive(["stats", "stepCount", "--options", "sum,median"], subject: "stats-errors")
        #expect(unknown.status == 64)
        #expect(
            unknown.err.hasPrefix(
                "error: unknown statistics option 'median'; expected sum, avg, min, max, recent, duration, by-source, by-value\n"
            )
        )
    }

    @Test(arguments: [
        (
            ["--tz", "Mars/Olympus"],
            "error: unknown time zone 'Mars/Olympus'; expected an IANA id such as America/New_York"
        ),
        (
            ["--from", "last tuesday"],
            "error: invalid date 'last tuesday' for '--from'; expected \(DateArgumentParser.expected)"
        ),
        (
            ["--from", "2024-03-10", "--to", "2024-03-09", "--tz", "UTC"],
            "error: --to (2024-03-09 00:00:00 +00:00) is before --from (2024-03-10 00:00:00 +00:00)"
        ),
    ])
    func badQueryOptionsAreUsageErrors(arguments: [String], firstLine: String) async throws {
        for command in ["samples", "stats"] {
            let result = try await runLive([command, "stepCount"] + arguments, subject: "stats")
            #expect(result.status == 64)
            #expect(result.err.split(separator: "\n").first.map(String.init) == firstLine)
        }
    }

    // MARK: server-info and connection errors

    @Test func serverInfoCountsWhatWasStored() async throws {
        let before: [String: Any] = try json(
            try await runLive(["server-info", "--format", "json"], subject: "info").out)
        try await Self.insert(["flightsClimbed,2024-03-10T08:00:00Z,,3,count,Phone"], subject: "info-\(UUID())")
        let after: [String: Any] = try json(
            try await runLive(["server-info", "--format", "json"], subject: "info").out)
        #expect(after["version"] as? String == "hkd 0.1.0")
        #expect((after["uptime"] as? Double ?? -1) >= 0)
        #expect((after["memory"] as? Int ?? 0) > 0)
        #expect((after["connections"] as? Int ?? 0) >= 1)
        #expect(after["subjects"] as? Int == (before["subjects"] as? Int ?? 0) + 1)
        let perTypeBefore = before["samplesPerType"] as? [String: Int] ?? [:]
        let perType = try #require(after["samplesPerType"] as? [String: Int])
        #expect(perType["flightsClimbed"] == (perTypeBefore["flightsClimbed"] ?? 0) + 1)
        #expect(after["samples"] as? Int == perType.values.reduce(0, +))
        let table = try await runLive(["server-info"], subject: "info")
        let lines = table.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "VERSION           hkd 0.1.0")
        #expect(lines.contains { $0.hasPrefix("MEMORY            ") && $0.hasSuffix("iB") })
        #expect(lines.contains { $0.hasPrefix("BLOCKS IN MEMORY  ") && $0.hasSuffix("B") })
        #expect(lines.contains { $0 == "BLOCKS ON DISK    0 B" })
        #expect(lines.contains { $0.hasPrefix("flightsClimbed ") })
        #expect(!lines.contains("STORE MEMORY"))
        let csv = try await runLive(["server-info", "--format", "csv"], subject: "info")
        #expect(csv.out.hasPrefix("version,uptime,connections,memory,blocksInMemory,blocksOnDisk,subjects,samples,"))
        #expect(csv.out.contains(",memory.sealedBlocks,memory.blockIndex,memory.head,"))
        #expect(csv.out.split(separator: "\n").count == 2)

        // The store's memory by structure: every part named, the unsealed rows holding the sample just stored.
        let memory = try #require(after["storeMemory"] as? [String: Int])
        #expect(
            Set(memory.keys) == [
                "sealedBlocks", "blockIndex", "head", "batchTable", "keptUUIDs", "elementExtras", "uuidIndex",
                "retryLedger",
                "metadata", "sources", "changeLog", "series",
            ])
        #expect(memory["head", default: 0] > 0)
        let parts = try await runLive(["server-info", "--memory"], subject: "info")
        let partLines = parts.out.split(separator: "\n").map(String.init)
        #expect(partLines.contains { $0.hasPrefix("STORE MEMORY") && $0.hasSuffix("PER SAMPLE") })
        #expect(partLines.contains { $0.hasPrefix("keptUUIDs ") && $0.hasSuffix(" B") })
    }

    @Test(arguments: [
        ["samples", "stepCount"], ["stats", "stepCount"], ["server-info"], ["insert", "/nonexistent.csv"],
    ])
    func aDownServerIsOneClearLine(arguments: [String]) async {
        let result = await runHKQ(["--server", "127.0.0.1:1", "--retry-for", "0"] + arguments)
        #expect(result.status == 69, "server unreachable")
        #expect(result.out == "")
        #expect(
            result.err
                == "error: cannot connect to 127.0.0.1:1: Connection refused — is hkd running? start it with: swift run -c release hkd\n"
        )
    }
}

extension DataCommandTests {
    @Test func priorityRefusesNamesNoSourceHasAndShowsLookAlikes() async throws {
        let watch = "Phillip\u{2019}s\u{A0}Apple Watch"
        try await Self.insert(
            [
                "stepCount,2024-03-10T08:00:00Z,,5,,\(watch)", "stepCount,2024-03-10T08:00:00Z,,6,,iPhone",
            ], subject: "priority-names")
        let typed = try await runLive(
            ["sources", "stepCount", "--priority", "Phillip's Apple Watch"], subject: "priority-names")
        #expect(typed.status == 65)
        #expect(
            typed.err.contains(#"no source "Phillip's Apple Watch" has stepCount samples for priority-names"#),
            "\(typed.err)")
        #expect(typed.err.contains(#"closest: "Phillip\u{2019}s\u{A0}Apple Watch""#), "\(typed.err)")
        let exact = try await runLive(
            ["sources", "stepCount", "--priority", watch, "--format", "csv"], subject: "priority-names")
        #expect(exact.status == 0, "\(exact.err)")
        #expect(exact.out.hasPrefix("rank,name,bundleIdentifier,version,device\n1,\(watch),"), "\(exact.out)")
        let table = try await runLive(["sources", "stepCount"], subject: "priority-names")
        #expect(table.out.contains(#""Phillip\u{2019}s\u{A0}Apple Watch""#), "\(table.out)")
        let unseen = try await runLive(
            ["sources", "stepCount", "--priority", "Tablet", "--allow-unseen"], subject: "priority-names")
        #expect(unseen.status == 0, "\(unseen.err)")
    }
}
