import Foundation
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Category samples through the real hkd and the client library (HEALTHKIT.md §12): insert, sample queries with a
/// value predicate, per-value statistics and nights, changes, deletes, and all of it across restarts (log replay
/// and snapshots); and a data directory written before category types existed still opens.
@Suite("category samples end to end", .serialized)
struct CategoryEndToEndTests {
    static let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch", device: "Watch6,2")
    static let phone = SourceInfo(name: "iPhone", bundleIdentifier: "com.apple.health.phone")
    /// 2024-01-10T22:00:00Z.
    static let t0: Timestamp = 1_704_924_000_000_000

    static func night(subject: String) throws -> [Sample] {
        let sleep = try QuantityType.named("sleepAnalysis")
        let h = Micros.hour
        let rows: [(Timestamp, Timestamp, String, SourceInfo)] = [
            (t0, t0 + 8 * h, "inBed", phone), (t0 + h, t0 + 3 * h, "asleepCore", watch),
            (t0 + 3 * h, t0 + 4 * h, "HKCategoryValueSleepAnalysisAsleepDeep", watch),
            (t0 + 4 * h, t0 + 6 * h, "5", watch),
        ]
        return try rows.enumerated().map { index, row in
            try Sample(
                uuid: UUID(uuidString: "5EE9A000-0000-4000-8000-00000000000\(index)")!, subject: subject,
                category: sleep, start: row.0, end: row.1, value: row.2, source: row.3)
        }
    }

    /// The figures of the night, which every restart must keep.
    static func expectNight(_ client: HealthClient, subject: String) async throws {
        let sleep = try QuantityType.named("sleepAnalysis")
        let samples = try await client.samples(sleep, subject: subject)
        #expect(samples.compactMap(\.categoryValue?.name) == ["inBed", "asleepCore", "asleepDeep", "asleepREM"])
        let stages = try await client.samples(sleep, subject: subject, filter: SampleFilter(values: .category([4, 5])))
        #expect(stages.compactMap(\.categoryValue?.name) == ["asleepDeep", "asleepREM"])
        let statistics = try #require(
            try await client.statistics(sleep, subject: subject, options: [.duration, .separateByValue]))
        let h = Micros.hour
        #expect(statistics.statistics.figures.duration == 8 * h)
        #expect(
            statistics.statistics.figures.durationByValue == [
                ValueDuration(value: 0, duration: 3 * h), ValueDuration(value: 3, duration: 2 * h),
                ValueDuration(value: 4, duration: h), ValueDuration(value: 5, duration: 2 * h),
            ])
        // Nights from 18:00 in Berlin: the whole night in the bucket ending 2024-01-11 18:00.
        let nights = try await client.collection(
            CollectionQuery(
                subject: subject, type: "sleepAnalysis", options: [.separateByValue],
                anchor: 1_704_819_600_000_000,  // 2024-01-09T17:00:00Z, 18:00 in Berlin
                interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin"))
        #expect(nights.buckets.count == 1)
        #expect(nights.buckets.first?.start == 1_704_906_000_000_000)  // 2024-01-10T17:00:00Z
        #expect(nights.buckets.first?.figures.duration(ofValue: 5) == 2 * h)
    }

    @Test("insert, query, statistics, nights, changes and deletes of category samples survive restarts")
    func roundTrip() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        let acks = try await client.insert(try Self.night(subject: "anna"))
        #expect(acks.map(\.inserted).reduce(0, +) == 4)
        // By default the iPhone, seen first, would rank first and its in-bed interval hide the Watch's stages.
        _ = try await client.setSourcePriority("sleepAnalysis", subject: "anna", order: ["Watch", "iPhone"])
        // The same samples again add nothing (same UUIDs, same content).
        let night = try Self.night(subject: "anna")
        let again = try await client.insert(night)
        #expect(again.map(\.inserted).reduce(0, +) == 0)
        #expect(again.map(\.duplicates).reduce(0, +) == 4)
        try await Self.expectNight(client, subject: "anna")

        // An out-of-range value is refused by the server, naming the value and the type.
        var bad = SampleBatch(batchID: 77, subject: "anna", typeIdentifier: "sleepAnalysis", unit: "")
        bad.append(start: Self.t0, end: Self.t0 + Micros.hour, value: 9, source: Self.watch)
        do {
            _ = try await client.insert(bad)
            Issue.record("a sleepAnalysis value of 9 was accepted")
        } catch {
            #expect(error.code.rawValue == ErrorCode.invalidSample.rawValue)
            #expect(error.message.contains("9 is not a value of category type sleepAnalysis"), "\(error.message)")
        }

        // Changes and deletes treat category samples as quantity samples.
        let sleep = try QuantityType.named("sleepAnalysis")
        let page = try await client.changes(sleep, subject: "anna")
        #expect(page.added.count == 4)
        client.close()

        // Log replay.
        #expect(await hkd.stop() == 0)
        let second = try await hkd.restart()
        let client2 = second.client()
        try await Self.expectNight(client2, subject: "anna")
        let deleted = try await client2.delete(
            sleep, subject: "anna", .uuids([try #require(night.last?.uuid)]))
        #expect(deleted == 1)
        let after = try await client2.changes(sleep, subject: "anna", since: page.anchor)
        #expect(after.deleted.map(\.uuid) == [night.last?.uuid])
        _ = try await client2.insert([night[3]])
        client2.close()

        // Snapshot (written at the clean stop), then the log after it.
        #expect(await second.stop() == 0)
        #expect(second.logText.contains("snapshot"), "\(second.logText)")
        let third = try await second.restart()
        let client3 = third.client()
        defer { client3.close() }
        try await Self.expectNight(client3, subject: "anna")
        let info = try await client3.serverInfo()
        #expect(info.samplesPerType.first { $0.type == "sleepAnalysis" }?.samples == 4)
        await third.stop()
    }

    @Test("grants apply to category types: share without read sees only its own samples; no share is refused")
    func grants() async throws {
        let hkd = try await TestServer()
        let admin = hkd.client()
        defer { admin.close() }
        let created = try await admin.administer(
            .create(
                IdentitySpec(
                    name: "sleep-sync", subjects: ["anna"],
                    grants: [TypeGrant(type: "sleepAnalysis", share: true, read: false)])))
        _ = try await admin.insert(try Self.night(subject: "anna"))
        let agent = hkd.client(token: created.token)
        defer { agent.close() }
        let sleep = try QuantityType.named("sleepAnalysis")
        let own = try Sample(
            subject: "anna", category: sleep, start: Self.t0 + 20 * Micros.hour, end: Self.t0 + 21 * Micros.hour,
            value: "awake", source: SourceInfo(name: "SleepSync"))
        #expect(try await agent.insert([own]).map(\.inserted) == [1])
        // Without read permission: only what it wrote (HealthKit's rule), never the admin's night.
        #expect(try await agent.samples(sleep, subject: "anna").map(\.uuid) == [own.uuid])
        #expect(try await admin.samples(sleep, subject: "anna").count == 5)
        let stand = try Sample(
            subject: "anna", category: try QuantityType.named("appleStandHour"), start: Self.t0,
            end: Self.t0 + Micros.hour, value: "stood", source: SourceInfo(name: "SleepSync"))
        do {
            _ = try await agent.insert([stand])
            Issue.record("an identity without a share grant for appleStandHour wrote one")
        } catch {
            #expect(error.code.rawValue == ErrorCode.forbidden.rawValue)
        }
        await hkd.stop()
    }

    @Test("metadata of every value type round-trips through insert, import, hkq samples JSON, the log and a snapshot")
    func metadataRoundTrip() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        let sleep = try QuantityType.named("sleepAnalysis")
        let metadata: [String: MetadataValue] = [
            "HKTimeZone": .string("Europe/Berlin"), "HKMetadataKeySyncVersion": .number(3),
            "observed": .date(Self.t0), "threshold": .quantity(120, unit: "count/min"),
        ]
        var night = try Self.night(subject: "anna")
        night[1].metadata = metadata
        _ = try await client.insert(night)
        func check(_ client: HealthClient) async throws {
            let samples = try await client.samples(sleep, subject: "anna")
            #expect(samples.map(\.metadata) == [[:], metadata, [:], [:]])
        }
        try await check(client)
        let imported = try await HKQBinaryTests.hkq(
            hkd.hkqServer + ["--subject", "rob", "import", TestFixtures.realExportPath])
        #expect(imported.status == 0, "\(imported.err)")
        let json = try await HKQBinaryTests.hkq(
            hkd.hkqServer + ["--subject", "anna", "samples", "sleepAnalysis", "--format", "json", "--tz", "UTC"])
        #expect(
            json.out.contains(
                #""metadata":{"HKMetadataKeySyncVersion":3,"HKTimeZone":"Europe/Berlin","observed":{"date":"2024-01-10T22:00:00Z"},"threshold":{"value":120,"unit":"count/min"}}"#
            ), "\(json.out)")
        #expect(json.out.split(separator: "\n").filter { $0.contains("metadata") }.count == 1)
        client.close()
        #expect(await hkd.stop() == 0)
        // After a clean stop the snapshot holds it; kill the next server so the log after it is replayed too.
        let second = try await hkd.restart()
        let client2 = second.client()
        try await check(client2)
        var more = try Self.night(subject: "ben")
        more[0].metadata = ["HKWasUserEntered": .number(1)]
        _ = try await client2.insert(more)
        client2.close()
        await second.kill()
        let third = try await second.restart()
        let client3 = third.client()
        defer { client3.close() }
        try await check(client3)
        #expect(try await client3.samples(sleep, subject: "ben").first?.metadata == ["HKWasUserEntered": .number(1)])
        // The export's <MetadataEntry> elements are kept: its sleep records carry HKTimeZone.
        let rob = try await client3.samples(sleep, subject: "rob")
        #expect(rob.count == 107)
        #expect(rob.allSatisfy { $0.metadata["HKTimeZone"] == .string("America/New_York") })
        await third.stop()
    }

    /// Tests/Fixtures/data-directory-0.1 (written by hkd 0.1.0 before category types: a snapshot of stepCount and
    /// heartRate, then a stepCount and a bodyMass insert and a source priority only in the log, the server killed).
    static func oldDirectory() throws -> TestDirectory { try TestDirectory(copyOf: "data-directory-0.1") }

    @Test("a data directory written before category types opens with all its data; category data joins it")
    func oldDataDirectoryOpens() async throws {
        let hkd = try await TestServer(directory: try Self.oldDirectory())
        let client = hkd.client()
        let info = try await client.serverInfo()
        let perType = Dictionary(uniqueKeysWithValues: info.samplesPerType.map { ($0.type, Int($0.samples)) })
        #expect(perType == ["stepCount": 3, "heartRate": 1, "bodyMass": 1])
        let steps = try QuantityType.named("stepCount")
        // Watch first (set in the log): iPhone 08:00–08:30 (3050), Watch 5000, then 2400 the next day.
        let sum = try await client.statistics(steps, subject: "anna", options: .cumulativeSum)
        #expect(sum?.statistics.figures.sum == 10_450)
        #expect(try await client.sourcePriority(steps, subject: "anna").map(\.name) == ["Watch", "iPhone"])
        _ = try await client.insert(try Self.night(subject: "anna"))
        _ = try await client.setSourcePriority("sleepAnalysis", subject: "anna", order: ["Watch", "iPhone"])
        client.close()
        #expect(await hkd.stop() == 0)
        let again = try await hkd.restart()
        let client2 = again.client()
        defer { client2.close() }
        try await Self.expectNight(client2, subject: "anna")
        let sumAgain = try await client2.statistics(steps, subject: "anna", options: .cumulativeSum)
        #expect(sumAgain?.statistics.figures.sum == 10_450)
        await again.stop()
    }
}
