import Foundation
import HealthModel
import Testing

@testable import HealthEngine

/// Paging a sample query with positions: every row once, in order, whatever is written between pages.
@Suite("Sample query pages")
struct SamplePageTests {
    private static let heartRate = try! QuantityType.named("heartRate")

    /// Pages of `limit` rows from the first until none is left; `between` runs before each page after the
    /// first with the position the next page starts from and the pages so far.
    private static func pages(
        _ store: HealthStore, sort: SampleSort, limit: Int, filter: SampleFilter = .all,
        between: (SamplePosition, [SampleQueryResult]) throws -> Void = { _, _ in }
    ) throws -> [SampleQueryResult] {
        var pages: [SampleQueryResult] = []
        var position: SamplePosition?
        repeat {
            if let position { try between(position, pages) }
            let page = try store.samples(
                subject: "anna", type: heartRate, filter: filter, sort: sort, limit: limit, after: position)
            pages.append(page)
            position = page.next
            #expect(page.next == nil || page.count == limit)
            if pages.count > 400 { Issue.record("paging does not end"); break }
        } while position != nil
        return pages
    }

    /// The rows of `store`, whole, in `sort` order (no limit, no position).
    private static func all(_ store: HealthStore, sort: SampleSort, filter: SampleFilter = .all) throws -> [UUID] {
        try store.samples(subject: "anna", type: heartRate, filter: filter, sort: sort).uuids
    }

    /// A store of small blocks holding rows with many equal starts and ends, in several batches, some late.
    private static func tiedStore(seed: UInt64, rows: Int = 120) throws -> HealthStore {
        var random = SplitMix64(seed: seed)
        let store = HealthStore(blockRows: 8)
        var written = 0
        while written < rows {
            let count = min(rows - written, Int(random.next() % 9) + 1)
            let batch = (0..<count).map { _ in
                let start = sec(Double(random.next() % 12))
                return Row(start, start + sec(Double(random.next() % 4)), Double(random.next() % 100 + 40))
            }
            _ = try store.insert(makeBatch(type: "heartRate", rows: batch))
            written += count
        }
        return store
    }

    @Test(
        "pages over equal starts and ends give the whole result once, in its order",
        arguments: SampleSort.allCases, [1, 3, 8, 50])
    func pagesMatchWholeResult(sort: SampleSort, limit: Int) throws {
        let store = try Self.tiedStore(seed: UInt64(limit) * 31 + UInt64(sort.rawValue))
        let pages = try Self.pages(store, sort: sort, limit: limit)
        #expect(pages.flatMap(\.uuids) == (try Self.all(store, sort: sort)))
        #expect(pages.dropLast().allSatisfy { $0.next != nil } && pages.last?.next == nil)
    }

    @Test("a limit that is not reached, or no limit, has no next position")
    func noNextWithoutCut() throws {
        let store = try Self.tiedStore(seed: 5, rows: 10)
        #expect(try store.samples(subject: "anna", type: Self.heartRate, limit: 10).next == nil)
        #expect(try store.samples(subject: "anna", type: Self.heartRate, limit: 11).next == nil)
        #expect(try store.samples(subject: "anna", type: Self.heartRate).next == nil)
        let cut = try store.samples(subject: "anna", type: Self.heartRate, limit: 9)
        #expect(cut.next != nil)
        let last = try store.samples(subject: "anna", type: Self.heartRate, limit: 9, after: cut.next)
        #expect(last.count == 1 && last.next == nil)
    }

    @Test("pages keep a filter: only matching rows, each once", arguments: SampleSort.allCases)
    func pagesWithFilter(sort: SampleSort) throws {
        let store = try Self.tiedStore(seed: 77)
        let filter = SampleFilter(
            date: DatePredicate(start: sec(3), end: sec(9)), values: ValueBounds(lower: 60, upper: 120))
        let pages = try Self.pages(store, sort: sort, limit: 4, filter: filter)
        #expect(pages.flatMap(\.uuids) == (try Self.all(store, sort: sort, filter: filter)))
    }

    @Test(
        "inserts between pages, before and after the position, never repeat nor hide a row that was there",
        arguments: SampleSort.allCases, [1, 2, 3] as [UInt64])
    func concurrentInserts(sort: SampleSort, seed: UInt64) throws {
        let store = try Self.tiedStore(seed: seed)
        let before = try Self.all(store, sort: sort)
        var random = SplitMix64(seed: seed ^ 0xC0FFEE)
        var inserted: [(uuid: UUID, lateEnough: Bool)] = []
        let pages = try Self.pages(store, sort: sort, limit: 7) { position, _ in
            // Rows at, before and after the position's start, some exactly at its start and end.
            var rows: [Row] = []
            for _ in 0..<4 {
                let start: Timestamp
                switch random.next() % 3 {
                case 0: start = position.start
                case 1: start = position.start - sec(Double(random.next() % 3 + 1))
                default: start = position.start + sec(Double(random.next() % 3 + 1))
                }
                let end = random.next() % 2 == 0 && sort.sortsByEnd ? max(start, position.key) : start + sec(1)
                rows.append(Row(start, end, 70))
            }
            let batch = makeBatch(type: "heartRate", rows: rows)
            _ = try store.insert(batch)
            // A new row's anchor is above every stored one, so it comes after the position exactly when its key
            // and start do not come before the position's (equal ones: by anchor, which is larger).
            for (index, row) in rows.enumerated() {
                let uuid = batch.uuid(row: index)
                let key = sort.sortsByEnd ? row.end : row.start
                let after = position.isBefore(key: key, start: row.start, anchor: .max)
                inserted.append((uuid, after))
            }
        }
        let seen = pages.flatMap(\.uuids)
        #expect(Set(seen).count == seen.count, "a row came twice")
        #expect(Set(before).isSubset(of: Set(seen)), "a row that was there was skipped")
        // The rows that were there keep their order among themselves.
        #expect(seen.filter(Set(before).contains) == before)
        // A row written after the position is found; one written before it is not (it is behind the pages).
        for row in inserted { #expect(seen.contains(row.uuid) == row.lateEnough) }
    }

    @Test("deletes between pages: deleted rows go, the others come once", arguments: SampleSort.allCases)
    func deletesBetweenPages(sort: SampleSort) throws {
        let store = try Self.tiedStore(seed: 11)
        let before = try Self.all(store, sort: sort)
        var random = SplitMix64(seed: 12)
        var deleted = Set<UUID>()
        var deletedUnseen = Set<UUID>()
        let pages = try Self.pages(store, sort: sort, limit: 5) { _, pages in
            // The row the position was taken from (the last one seen) and a few others anywhere.
            let seen = Set(pages.flatMap(\.uuids))
            var victims = Set((0..<3).map { _ in before[Int(random.next() % UInt64(before.count))] })
            victims.insert(pages.last!.uuids.last!)
            victims.subtract(deleted)
            _ = try store.delete(subject: "anna", type: Self.heartRate, filter: SampleFilter(uuids: victims))
            deleted.formUnion(victims)
            deletedUnseen.formUnion(victims.subtracting(seen))
        }
        let seen = pages.flatMap(\.uuids)
        #expect(Set(seen).count == seen.count)
        #expect(Set(before.filter { !deleted.contains($0) }).isSubset(of: Set(seen)))
        #expect(Set(seen).isDisjoint(with: deletedUnseen), "a row deleted before its page came")
        #expect(seen == before.filter(Set(seen).contains))
    }

    @Test("the row a position was taken from may be deleted; the next page starts just after it")
    func positionRowDeleted() throws {
        let store = try Self.tiedStore(seed: 21, rows: 40)
        for sort in SampleSort.allCases {
            let first = try store.samples(subject: "anna", type: Self.heartRate, sort: sort, limit: 10)
            let expected = Array(try Self.all(store, sort: sort).dropFirst(10))
            _ = try store.delete(
                subject: "anna", type: Self.heartRate, filter: SampleFilter(uuids: [first.uuids.last!]))
            let rest = try store.samples(subject: "anna", type: Self.heartRate, sort: sort, after: first.next)
            #expect(rest.uuids == expected)
        }
    }

    @Test("a position of another sort order is refused with invalidArgument")
    func wrongSort() throws {
        let store = try Self.tiedStore(seed: 3, rows: 10)
        let page = try store.samples(subject: "anna", type: Self.heartRate, sort: .endAscending, limit: 3)
        let error = healthError {
            _ = try store.samples(
                subject: "anna", type: Self.heartRate, sort: .startAscending, limit: 3, after: page.next)
        }
        #expect(error?.code.rawValue == ErrorCode.invalidArgument.rawValue)
        #expect(error?.message.contains("sorted by end") == true)
    }

    @Test("an unknown subject has no rows after any position")
    func unknownSubject() throws {
        let store = HealthStore()
        let position = SamplePosition(sort: .startAscending, key: 5, start: 5, anchor: 1)
        let result = try store.samples(subject: "nobody", type: Self.heartRate, limit: 2, after: position)
        #expect(result.count == 0 && result.next == nil)
    }
}
