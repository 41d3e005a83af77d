import Foundation
import HealthClient
import Testing

/// What an integrator gets from `import HealthClient` alone (this file imports nothing else of the project).
@Suite("the public surface of HealthClient")
struct PublicSurfaceTests {
    static let steps = try! QuantityType.named("stepCount")
    static let distance = try! QuantityType.named("distanceWalkingRunning")
    static let watch = SourceInfo(name: "Anna's Watch")

    @Test("stableID depends on content only: same content, same UUID; any field changed, another")
    func stableIDIsContent() throws {
        let count = try HealthUnit(parsing: "count")
        let id = try Sample.stableID(
            type: Self.steps, start: 0, end: 60_000_000, value: 12, unit: count, source: Self.watch)
        #expect(
            try Sample.stableID(type: Self.steps, start: 0, end: 60_000_000, value: 12, unit: count, source: Self.watch)
                == id)
        #expect(
            try Sample.stableID(type: Self.steps, start: 1, end: 60_000_000, value: 12, unit: count, source: Self.watch)
                != id)
        #expect(
            try Sample.stableID(type: Self.steps, start: 0, end: 60_000_000, value: 13, unit: count, source: Self.watch)
                != id)
        #expect(
            try Sample.stableID(
                type: Self.steps, start: 0, end: 60_000_000, value: 12, unit: count, source: SourceInfo(name: "Phone"))
                != id)
        let sample = Sample(
            subject: "anna", type: Self.steps, start: 0, end: 60_000_000, value: 12, unit: count, source: Self.watch)
        #expect(try sample.withStableID().uuid == id)
        var other = sample
        other.subject = "ben"
        #expect(try other.stableID() == id, "the subject does not take part: UUIDs are scoped per subject")
    }

    @Test("stableID is unit-independent: 1.5 km and 1500 m are the same sample")
    func stableIDIgnoresUnit() throws {
        let km = try Sample.stableID(
            type: Self.distance, start: 0, end: 1, value: 1.5, unit: try HealthUnit(parsing: "km"), source: Self.watch)
        let m = try Sample.stableID(
            type: Self.distance, start: 0, end: 1, value: 1500, unit: try HealthUnit(parsing: "m"), source: Self.watch)
        #expect(km == m)
        #expect(throws: HealthError.self) {
            try Sample.stableID(
                type: Self.distance, start: 0, end: 1, value: 1, unit: try HealthUnit(parsing: "count"),
                source: Self.watch)
        }
    }

    @Test("dates and microseconds convert both ways")
    func dateHelpers() {
        let instant: Timestamp = 1_709_960_400_123_456
        #expect(Date(timestamp: instant).timestamp == instant)
        #expect(Duration.seconds(2).wholeMicroseconds == 2 * Micros.second)
        #expect(Duration.microseconds(1_500).wholeMicroseconds == 1_500)
        let sample = Sample(
            subject: "anna", type: Self.steps, start: Date(timestamp: instant),
            end: Date(timestamp: instant + Micros.minute),
            value: 1, unit: Self.steps.canonicalUnit, source: Self.watch)
        #expect(sample.start == instant && sample.end == instant + Micros.minute)
        #expect(sample.endDate.timeIntervalSince(sample.startDate) == 60)
        #expect(DatePredicate(start: Date(timestamp: instant)).start == instant)
    }

    @Test("queries name types as QuantityType and zones as TimeZone")
    func typedQueries() throws {
        let query = CollectionQuery(
            subject: "anna", type: Self.steps, options: .cumulativeSum, anchor: Date(timestamp: 0),
            interval: CalendarInterval(1, .day), timeZone: try #require(TimeZone(identifier: "Europe/Berlin")))
        #expect(query.type == "stepCount" && query.timeZone == "Europe/Berlin" && query.anchor == 0)
        #expect(ChangesQuery(subject: "anna", type: Self.steps, anchor: 7).anchor == 7)
    }

    @Test("page tokens travel as text: what a page's next token prints reads back as the same token")
    func pageTokenText() throws {
        let page = SamplePage(samples: [], next: PageToken(bytes: [1, 0, 0xFB, 0xFF, 0x3E]))
        let text = try #require(page.next?.text)
        #expect(text == "AQD7_z4")
        #expect(PageToken(text: text) == page.next)
    }
}
