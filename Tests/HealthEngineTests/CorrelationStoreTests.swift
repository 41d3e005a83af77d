import Foundation
import HealthEngine
import HealthModel
import Testing

/// The correlation store and the rules a correlation keeps (HEALTHKIT.md §13).
struct CorrelationStoreTests {
    static let t0: Timestamp = 1_700_000_000_000_000
    static let cuff = SourceInfo(name: "Cuff")
    static let systolic = try! QuantityType.named("bloodPressureSystolic")
    static let diastolic = try! QuantityType.named("bloodPressureDiastolic")

    static func reading(day: Int) -> Correlation {
        Correlation(
            type: .bloodPressure, start: t0 + Int64(day) * Micros.day, end: t0 + Int64(day) * Micros.day,
            source: cuff,
            members: [
                CorrelationMember(uuid: UUID(), type: systolic), CorrelationMember(uuid: UUID(), type: diastolic),
            ])
    }

    static func expectInvalid(_ correlation: Correlation, _ why: String) {
        do {
            try correlation.validate()
            Issue.record("accepted: \(why)")
        } catch let error as HealthError {
            #expect(error.code.rawValue == ErrorCode.invalidSample.rawValue && error.message.contains(why))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("a blood pressure has one systolic and one diastolic member; food only dietary ones; distinct UUIDs")
    func rules() throws {
        try Self.reading(day: 0).validate()
        var one = Self.reading(day: 0)
        one.members.removeLast()
        Self.expectInvalid(one, "one systolic and one diastolic")
        var twice = Self.reading(day: 0)
        twice.members[1].uuid = twice.members[0].uuid
        Self.expectInvalid(twice, "appears twice")
        var stranger = Self.reading(day: 0)
        stranger.members[1].type = try QuantityType.named("heartRate")
        Self.expectInvalid(stranger, "does not belong")
        var backwards = Self.reading(day: 0)
        backwards.end = backwards.start - 1
        Self.expectInvalid(backwards, "ends before it starts")
        let energy = try QuantityType.named("dietaryEnergyConsumed")
        let protein = try QuantityType.named("dietaryProtein")
        let meal = Correlation(
            type: .food, start: Self.t0, end: Self.t0 + Micros.hour, source: Self.cuff,
            members: [CorrelationMember(uuid: UUID(), type: energy), CorrelationMember(uuid: UUID(), type: protein)])
        try meal.validate()
        Self.expectInvalid(
            Correlation(type: .food, start: Self.t0, end: Self.t0, source: Self.cuff, members: []), "members")
        // The UUID is the content identity: the same reading from the same source names the same correlation.
        #expect(Self.reading(day: 3).uuid == Self.reading(day: 3).uuid)
        #expect(Self.reading(day: 3).uuid != Self.reading(day: 4).uuid)
    }

    @Test("queries filter by type, start range, UUID, anchor and writer; deletions after an anchor")
    func filters() throws {
        let store = CorrelationStore()
        let readings = (0..<3).map { Self.reading(day: $0) }
        try store.insert(subject: "anna", readings, writer: 1)
        let meal = Correlation(
            type: .food, start: Self.t0 + Micros.hour, end: Self.t0 + Micros.hour, source: Self.cuff,
            members: [CorrelationMember(uuid: UUID(), type: try QuantityType.named("dietaryProtein"))])
        try store.insert(subject: "anna", [meal], writer: 2)
        #expect(try store.insert(subject: "anna", readings) == (0, 3))
        #expect(
            try store.correlations(subject: "anna").objects.map(\.object.start) == [
                Self.t0, Self.t0 + Micros.hour, Self.t0 + Micros.day, Self.t0 + 2 * Micros.day,
            ])
        #expect(try store.correlations(subject: "anna", filter: CorrelationFilter(types: [.food])).objects.count == 1)
        let range = CorrelationFilter(start: Self.t0 + Micros.hour, end: Self.t0 + 2 * Micros.day)
        #expect(
            try store.correlations(subject: "anna", filter: range).objects.map(\.object.type) == [
                .food, .bloodPressure,
            ])
        #expect(try store.correlations(subject: "anna", filter: CorrelationFilter(writer: 2)).objects.count == 1)
        #expect(try store.correlations(subject: "ben").objects.isEmpty)
        #expect(try store.delete(subject: "anna", uuids: [readings[1].uuid], writer: 2) == 0)
        #expect(try store.delete(subject: "anna", uuids: [readings[1].uuid]) == 1)
        let changes = try store.correlations(subject: "anna", filter: CorrelationFilter(afterAnchor: 4))
        #expect(changes.objects.isEmpty && changes.deletions.map(\.uuid) == [readings[1].uuid])
        #expect(changes.lastAnchor == 5)
        var conflicting = readings[0]
        conflicting.metadata = ["HKWasUserEntered": .number(1)]
        #expect(throws: HealthError.self) { try store.insert(subject: "anna", [conflicting]) }
    }
}
