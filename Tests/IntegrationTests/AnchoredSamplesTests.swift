import Foundation
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// `HealthClient.anchoredSamples`: HKAnchoredObjectQuery's answer as samples, not a columnar batch.
@Suite struct AnchoredSamplesTests {
    @Test func addedSamplesDeletionsAndPagesAsHealthKitGivesThem() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        let steps = try QuantityType.named("stepCount")
        let inserted = try EndToEndTests.steps(subject: "anna", minutes: 5).map { try $0.withStableID() }
        _ = try await client.insert(inserted)

        let first = try await client.anchoredSamples(steps, subject: "anna", limit: 3)
        #expect(first.added == Array(inserted.prefix(3)))
        #expect(first.deleted.isEmpty)
        #expect(first.hasMore)
        let rest = try await client.anchoredSamples(steps, subject: "anna", since: first.anchor)
        #expect(rest.added == Array(inserted.suffix(2)))
        #expect(!rest.hasMore)

        _ = try await client.delete("stepCount", subject: "anna", .uuids([inserted[1].uuid]))
        let changes = try await client.anchoredSamples(steps, subject: "anna", since: rest.anchor)
        #expect(changes.added.isEmpty)
        #expect(changes.deleted.map(\.uuid) == [inserted[1].uuid])
        #expect(changes.anchor > rest.anchor)

        // The view of the wire answer is the same thing, values in the unit asked for.
        let wire = try await client.changes("stepCount", subject: "anna", limit: 3)
        #expect(try AnchoredSamples(wire).added.map(\.uuid) == wire.added.samples().map(\.uuid))
        let counted = try await client.anchoredSamples(
            steps, subject: "anna", limit: 1, unit: try HealthUnit(parsing: "count"))
        #expect(counted.added.first?.value == inserted[0].value)
        #expect(counted.added.first?.unit.symbol == "count")
    }
}
