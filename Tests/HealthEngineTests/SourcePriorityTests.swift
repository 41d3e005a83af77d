import Foundation
import HealthModel
import Testing

@testable import HealthEngine

/// The default source order (HEALTHKIT.md §8) for sources as exports write them, and partial priority orders.
@Suite("source priority")
struct SourcePriorityTests {
    // As an Apple Health export writes them: no bundle identifiers; devices by hardware model, or none.
    static let phone = SourceInfo(name: "Phillip’s iPhone", device: "iPhone10,1")
    static let watch = SourceInfo(name: "Phillip’s Apple Watch", device: "Watch3,2")
    static let phoneByName = SourceInfo(name: "Anna’s iPhone")
    static let garmin = SourceInfo(name: "Connect", device: "fenix 6")
    static let sleepApp = SourceInfo(name: "AutoSleep")
    static let logbook = SourceInfo(name: "Logbook")

    static func store(_ sources: [SourceInfo], userEntered: SourceInfo? = nil) throws -> HealthStore {
        let rows = sources.enumerated().map { index, source in
            Row(
                Timestamp(index) * Micros.minute, Timestamp(index + 1) * Micros.minute, 1, source,
                userEntered: source == userEntered)
        }
        return try HealthEngineTests.store(type: "stepCount", rows: rows)
    }

    @Test("manual entries first, then the person's Apple devices, then other apps newest first")
    func defaultOrder() throws {
        // Seen in this order: an older third-party app, the iPhone, the Watch, Garmin, a manual logbook.
        let store = try Self.store(
            [Self.sleepApp, Self.phone, Self.watch, Self.garmin, Self.logbook], userEntered: Self.logbook)
        let order = try store.sourcePriority(subject: "anna", type: "stepCount").map(\.name)
        #expect(order == ["Logbook", "Phillip’s iPhone", "Phillip’s Apple Watch", "Connect", "AutoSleep"])
        #expect(SeriesSources.isApple(Self.phoneByName))
        #expect(
            !SeriesSources.isApple(Self.garmin)
                && !SeriesSources.isApple(SourceInfo(name: "Watchtower", device: "Watchtower")))
    }

    @Test("naming some sources puts them first and keeps the others in their current order")
    func partialOrderKeepsTheRest() throws {
        let store = try Self.store([Self.sleepApp, Self.phone, Self.watch, Self.garmin])
        try store.setSourcePriority(
            subject: "anna", type: "stepCount", order: [Self.sleepApp, Self.garmin, Self.phone, Self.watch])
        try store.setSourcePriority(subject: "anna", type: "stepCount", order: [Self.watch])
        let order = try store.sourcePriority(subject: "anna", type: "stepCount").map(\.name)
        #expect(order == ["Phillip’s Apple Watch", "AutoSleep", "Connect", "Phillip’s iPhone"])
    }

    // MARK: manual entries as exports write them

    /// The Health app, which writes the person's manual entries (an export names no bundle id or device).
    static let health = SourceInfo(name: "Health", version: "17.1")
    /// 2024-03-11T00:00Z.
    static let day: Timestamp = 1_710_115_200_000_000

    /// A stepCount batch of one source: `(start hour, end hour, steps, metadata)` rows on ``day``.
    static func batch(
        _ source: SourceInfo, _ rows: [(Double, Double, Double, [String: MetadataValue])], uuids: [UUID]? = nil
    ) -> SampleBatch {
        var batch = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for (index, row) in rows.enumerated() {
            batch.append(
                start: day + Timestamp(row.0 * 3600) * Micros.second,
                end: day + Timestamp(row.1 * 3600) * Micros.second,
                value: row.2, source: source, uuid: uuids?[index], metadata: row.3)
        }
        return batch
    }

    static func order(_ store: HealthStore, _ type: String = "stepCount") throws -> [String] {
        try store.sourcePriority(subject: "anna", type: try QuantityType.named(type)).map(\.name)
    }

    static func mergedSum(_ store: HealthStore) throws -> Double? {
        try store.statistics(subject: "anna", type: "stepCount", options: .cumulativeSum).figures.sum
    }

    /// The day's merged sum from a daily collection in UTC.
    static func daySum(_ store: HealthStore) throws -> Double? {
        let buckets = try store.collection(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: day,
            interval: CalendarInterval(1, .day), timeZone: "UTC")
        #expect(buckets.map(\.start) == [day])
        return buckets.first?.figures.sum
    }

    /// The iPhone's 200 and 700 steps, Garmin's 800 (under the iPhone's 700), and a manual 500 under the iPhone's
    /// 200, as `HKWasUserEntered` 1 (the number an export gives).
    static func manualEntryStore() throws -> HealthStore {
        let store = HealthStore()
        _ = try store.insert(batch(phone, [(8, 9, 200, [:]), (9, 10, 700, [:])]))
        _ = try store.insert(batch(garmin, [(9, 10, 800, [:])]))
        _ = try store.insert(batch(health, [(8, 9, 500, ["HKWasUserEntered": .number(1)])]))
        return store
    }

    @Test("an export's manual entry (HKWasUserEntered 1) ranks first and counts in merged sums and collections")
    func exportManualEntryRanksFirst() throws {
        let store = try Self.manualEntryStore()
        // Was iPhone, Health, Connect: the engine read only the constant's name as a key.
        #expect(try Self.order(store) == ["Health", "Phillip’s iPhone", "Connect"])
        // 08–09 the manual 500 (not the iPhone's 200), 09–10 the iPhone's 700 (not Garmin's 800).
        #expect(try Self.mergedSum(store) == 1200)
        #expect(try Self.daySum(store) == 1200)
        // The rank is the type's: the same source's samples of another type, not entered by hand, rank as before.
        var mass = SampleBatch(batchID: freshBatchID(), subject: "anna", typeIdentifier: "bodyMass", unit: "kg")
        mass.append(start: Self.day, end: Self.day, value: 70, source: Self.health)
        mass.append(start: Self.day + Micros.hour, end: Self.day + Micros.hour, value: 71, source: Self.garmin)
        _ = try store.insert(mass)
        #expect(try Self.order(store, "bodyMass") == ["Connect", "Health"])
    }

    @Test("a source's first manual sample moves it up at once; an explicit order still wins")
    func firstManualSampleMovesTheSourceUp() throws {
        let store = HealthStore()
        _ = try store.insert(Self.batch(Self.phone, [(8, 9, 200, [:]), (9, 10, 700, [:])]))
        _ = try store.insert(Self.batch(Self.garmin, [(9, 10, 800, [:])]))
        // A sample of the Health app not entered by hand (HKWasUserEntered 0): a third-party source, newest first.
        _ = try store.insert(Self.batch(Self.health, [(12, 13, 50, ["HKWasUserEntered": .number(0)])]))
        #expect(try Self.order(store) == ["Phillip’s iPhone", "Health", "Connect"])
        #expect(try Self.mergedSum(store) == 950)
        _ = try store.insert(Self.batch(Self.health, [(8, 9, 500, ["HKWasUserEntered": .number(1)])]))
        #expect(try Self.order(store) == ["Health", "Phillip’s iPhone", "Connect"])
        #expect(try Self.mergedSum(store) == 1250)
        #expect(try Self.daySum(store) == 1250)
        try store.setSourcePriority(subject: "anna", type: "stepCount", order: [Self.phone])
        #expect(try Self.order(store) == ["Phillip’s iPhone", "Health", "Connect"])
        #expect(try Self.mergedSum(store) == 950)
    }

    @Test(
        "every spelling of the mark that clients send counts; other values do not",
        arguments: [
            (["HKWasUserEntered": .string("1")], true), (["HKWasUserEntered": .string("true")], true),
            (["HKWasUserEntered": .string("YES")], true), (["HKMetadataKeyWasUserEntered": .number(1)], true),
            (["HKWasUserEntered": .number(0)], false), (["HKWasUserEntered": .string("0")], false),
            (["HKWasUserEntered": .string("false")], false), (["WasUserEntered": .number(1)], false),
        ] as [([String: MetadataValue], Bool)])
    func markSpellings(metadata: [String: MetadataValue], marks: Bool) throws {
        #expect(SeriesSources.marksUserEntered(metadata) == marks)
        let store = HealthStore()
        _ = try store.insert(Self.batch(Self.phone, [(8, 9, 200, [:])]))
        _ = try store.insert(Self.batch(Self.health, [(8, 9, 500, metadata)]))
        #expect(try Self.order(store).first == (marks ? "Health" : "Phillip’s iPhone"))
    }

    @Test("a manual row that is not stored (a duplicate) does not mark its source")
    func duplicateManualRowDoesNotMark() throws {
        let store = HealthStore()
        _ = try store.insert(Self.batch(Self.phone, [(8, 9, 200, [:])]))
        let uuid = UUID()
        _ = try store.insert(Self.batch(Self.health, [(12, 13, 50, [:])], uuids: [uuid]))
        // The same sample again (same UUID and content), now marked, beside a new unmarked one.
        let again = Self.batch(
            Self.health, [(12, 13, 50, ["HKWasUserEntered": .number(1)]), (14, 15, 60, [:])], uuids: [uuid, UUID()])
        #expect(try store.insert(again).inserted == 1)
        #expect(try Self.order(store) == ["Phillip’s iPhone", "Health"])
    }

    @Test("the rank survives a shard image, and an older image's flags are completed from its metadata table")
    func rankSurvivesImages() throws {
        let store = try Self.manualEntryStore()
        let type = try QuantityType.named("stepCount")
        var (image, _) = store.image(of: type) { 0 }
        let restored = HealthStore()
        try restored.restore(image)
        #expect(try Self.order(restored) == ["Health", "Phillip’s iPhone", "Connect"])
        #expect(restored.image(of: type) { 0 }.0 == image)
        // An earlier version wrote every flag false here: it did not read HKWasUserEntered. The metadata table
        // still holds the manual row, so the restored order is the one replaying the log gives.
        image.series[0].userEnteredSources = image.series[0].userEnteredSources.map { _ in false }
        image.series[0].userEnteredFromMetadata = true
        let older = HealthStore()
        try older.restore(image)
        #expect(try Self.order(older) == ["Health", "Phillip’s iPhone", "Connect"])
        #expect(try Self.mergedSum(older) == 1200)
        // A flag whose samples were deleted stays (the table no longer shows them).
        _ = try store.delete(
            subject: "anna", type: "stepCount", filter: SampleFilter(sources: ["Health"]))
        #expect(try Self.order(store) == ["Health", "Phillip’s iPhone", "Connect"])
        let afterDelete = HealthStore()
        try afterDelete.restore(store.image(of: type) { 0 }.0)
        #expect(try Self.order(afterDelete) == ["Health", "Phillip’s iPhone", "Connect"])
    }
}
