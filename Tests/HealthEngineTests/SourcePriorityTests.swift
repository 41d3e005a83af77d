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
}
