import Foundation
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Paging a sample query on the real hkd with page tokens while another client writes, across a restart.
@Suite("Sample query paging", .serialized)
struct SamplePagingTests {
    static let t0: Timestamp = 1_704_067_200_000_000  // 2024-01-01T00:00:00Z
    static let heartRate = try! QuantityType.named("heartRate")
    static let bpm = try! HealthUnit(parsing: "count/min")
    static let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")

    /// `count` heart-rate readings of "anna" with starts among 200 minutes, so many share a start (seeded).
    static func readings(_ count: Int, random: inout SplitMix64) -> [Sample] {
        (0..<count).map { _ in
            let start = t0 + Int64(random.next() % 200) * Micros.minute
            return Sample(
                subject: "anna", type: heartRate, start: start, end: start + Int64(random.next() % 3) * Micros.minute,
                value: Double(50 + random.next() % 100), unit: bpm, source: watch)
        }
    }

    @Test(
        "following the tokens gives every stored sample once while another client inserts, through a restart",
        arguments: [SampleSort.startAscending, .endDescending])
    func pagesWhileInserting(sort: SampleSort) async throws {
        var random = SplitMix64(seed: 0x9A6E + UInt64(sort.rawValue))
        var hkd = try await TestServer()
        var writer = hkd.client(name: "writer")
        _ = try await writer.insert(Self.readings(1500, random: &random), maxBatchRows: 300)
        let before = try await writer.samples(Self.heartRate, subject: "anna", sort: sort).map(\.uuid)
        #expect(before.count == 1500)

        var reader = hkd.client(name: "reader")
        var seen: [UUID] = []
        var inserted: [UUID] = []
        var after: PageToken?
        var pages = 0
        repeat {
            let page = try await reader.samplePage(
                Self.heartRate, subject: "anna", sort: sort, limit: 97, after: after)
            seen += page.samples.map(\.uuid)
            after = page.next
            pages += 1
            // Between pages, another client writes rows all over the range, some at the starts just listed.
            var more = Self.readings(20, random: &random)
            if let last = page.samples.last { more.append(last.withUUID(UUID())) }
            let acks = try await writer.insert(more)
            #expect(acks.map(\.inserted).reduce(0, +) == UInt64(more.count))
            inserted += more.map(\.uuid)
            if pages == 5 {
                // The token outlives the server: anchors are the same after a restart (log replay).
                writer.close()
                reader.close()
                #expect(await hkd.stop() == 0)
                hkd = try await hkd.restart()
                reader = hkd.client(name: "reader")
                writer = hkd.client(name: "writer")
            }
        } while after != nil && pages < 200
        reader.close()
        writer.close()
        #expect(after == nil, "paging ended")
        #expect(Set(seen).count == seen.count, "a sample came twice")
        #expect(Set(before).isSubset(of: Set(seen)), "a sample stored before paging began was skipped")
        #expect(seen.filter(Set(before).contains) == before, "the stored samples keep their order")
        #expect(Set(seen).isSubset(of: Set(before + inserted)))
        #expect(await hkd.stop() == 0)
    }

    @Test("the pages of a query, iterated, are its whole answer in order")
    func iteratedPages() async throws {
        var random = SplitMix64(seed: 0x9A6F)
        let hkd = try await TestServer()
        let client = hkd.client()
        _ = try await client.insert(Self.readings(700, random: &random))
        let filter = SampleFilter(
            date: DatePredicate(start: Self.t0 + 20 * Micros.minute, end: Self.t0 + 180 * Micros.minute))
        let whole = try await client.samples(Self.heartRate, subject: "anna", filter: filter, sort: .startDescending)
        var pages: [SamplePage] = []
        for try await page in client.samplePages(
            Self.heartRate, subject: "anna", filter: filter, sort: .startDescending, pageSize: 64)
        {
            pages.append(page)
        }
        #expect(pages.flatMap(\.samples) == whole)
        #expect(pages.dropLast().allSatisfy { $0.samples.count == 64 && $0.next != nil })
        #expect(pages.last?.next == nil)
        #expect(pages.count == (whole.count + 63) / 64)
        client.close()
        #expect(await hkd.stop() == 0)
    }
}

extension Sample {
    /// The same sample under another UUID.
    fileprivate func withUUID(_ uuid: UUID) -> Sample {
        var copy = self
        copy.uuid = uuid
        return copy
    }
}
