import Foundation
import HealthClient
import HealthModel
import HealthPosix
import HealthWire
import Synchronization
import TestSupport
import Testing

/// Changes since an anchor and subscriptions through the real hkd (HEALTHKIT.md §7 live mode, §9).
@Suite("live updates end to end", .serialized)
struct LiveUpdateTests {
    static let phone = SourceInfo(name: "iPhone", bundleIdentifier: "com.apple.health.phone")
    static let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")
    /// 2024-03-09T05:00Z: midnight in New York.
    static let day0: Timestamp = 1_709_960_400_000_000

    /// A batch of `count` step samples of `minutes` each, starting at `start` every `every` minutes.
    static func batch(
        _ start: Timestamp, count: Int, every: Int64 = 5, minutes: Int64 = 3, source: SourceInfo = phone,
        subject: String = "anna"
    ) -> SampleBatch {
        var batch = SampleBatch(
            batchID: HealthClient.makeBatchID(), subject: subject, typeIdentifier: "stepCount", unit: "count")
        for i in 0..<Int64(count) {
            let s = start + i * every * Micros.minute
            batch.append(start: s, end: s + minutes * Micros.minute, value: Double(10 + i % 7), source: source)
        }
        return batch
    }

    /// Pages through every change after `anchor` with `limit`; returns added and deleted UUIDs and the anchor.
    static func drain(_ client: HealthClient, from anchor: UInt64, limit: UInt64) async throws -> (
        [UUID], [UUID], UInt64
    ) {
        var anchor = anchor
        var added: [UUID] = []
        var deleted: [UUID] = []
        while true {
            let page = try await client.changes("stepCount", subject: "anna", since: anchor, limit: limit)
            #expect(page.added.count + page.deleted.count <= Int(limit))
            added += (0..<page.added.count).map(page.added.uuid(row:))
            deleted += page.deleted.map(\.uuid)
            anchor = page.anchor
            if !page.hasMore { return (added, deleted, anchor) }
        }
    }

    @Test("paging with small limits returns every change once; anchors survive a clean restart and a SIGKILL")
    func anchorsSurviveRestarts() async throws {
        var hkd = try await TestServer()
        var client = hkd.client()
        var expected: [UUID] = []
        for b in 0..<6 {
            // Back-dated batches: the later ones lie years before the first.
            let batch = Self.batch(Self.day0 - Int64(b) * 400 * Micros.day, count: 500)
            _ = try await client.insert(batch)
            expected += (0..<batch.count).map(batch.uuid(row:))
        }
        let (added, deleted, anchor) = try await Self.drain(client, from: 0, limit: 37)
        #expect(added == expected, "every sample once, in arrival order")
        #expect(deleted.isEmpty)
        let victims = Array(expected.prefix(5))
        #expect(try await client.delete("stepCount", subject: "anna", .uuids(victims)) == 5)
        client.close()
        #expect(await hkd.stop() == 0)

        hkd = try await hkd.restart()
        client = hkd.client()
        let afterRestart = try await Self.drain(client, from: anchor, limit: 3)
        #expect(afterRestart.0.isEmpty)
        #expect(Set(afterRestart.1) == Set(victims) && afterRestart.1.count == 5)
        let late = Self.batch(Self.day0 - 3000 * Micros.day, count: 50)
        _ = try await client.insert(late)
        client.close()
        await hkd.kill()

        hkd = try await hkd.restart()
        client = hkd.client()
        defer { client.close() }
        let afterKill = try await Self.drain(client, from: afterRestart.2, limit: 7)
        #expect(afterKill.0 == (0..<late.count).map(late.uuid(row:)), "replayed from the log with the same anchors")
        #expect(afterKill.1.isEmpty)
        let everything = try await Self.drain(client, from: 0, limit: 1000)
        #expect(everything.0.count == expected.count - 5 + late.count)
        await hkd.stop()
    }

    @Test("an anchor older than the deletion retention gets anchorExpired")
    func expiredAnchor() async throws {
        let hkd = try await TestServer(arguments: ["--deleted-retention", "1"])
        let client = hkd.client()
        defer { client.close() }
        let batch = Self.batch(Self.day0, count: 10)
        _ = try await client.insert(batch)
        let anchor = try await client.changes("stepCount", subject: "anna").anchor
        _ = try await client.delete("stepCount", subject: "anna", .uuids([batch.uuid(row: 0)]))
        // The deletion ages past the 1 s retention: ask until the anchor is refused.
        var failure: (code: UInt16, message: String)?
        try await waitUntil("the anchor to expire with the deletion's 1 s retention") {
            do {
                _ = try await client.changes("stepCount", subject: "anna", since: anchor)
                return false
            } catch let error as HealthClientError {
                failure = (error.code.rawValue, error.message)
                return true
            }
        }
        #expect(failure?.code == ErrorCode.anchorExpired.rawValue)
        #expect(failure?.message.contains("resync from 0") == true)
        #expect(try await client.changes("stepCount", subject: "anna", since: 0).added.count == 9)
        await hkd.stop()
    }

    @Test("a live collection's pushed buckets always equal a fresh collection query after random inserts and deletes")
    func liveCollectionMatchesFreshQuery() async throws {
        let hkd = try await TestServer()
        let writer = hkd.client(name: "writer")
        let watcher = hkd.client(name: "watcher")
        defer {
            writer.close()
            watcher.close()
        }
        let query = CollectionQuery(
            subject: "anna", type: "stepCount", options: [.cumulativeSum], anchor: Self.day0,
            interval: CalendarInterval(1, .day), timeZone: "America/New_York")
        _ = try await writer.insert(Self.batch(Self.day0, count: 100, every: 60, minutes: 90))
        let received = Mutex(LiveCollectionTable())
        let reader = Task {
            for try await update in watcher.liveCollection(query) { received.withLock { _ = $0.apply(update) } }
        }
        defer { reader.cancel() }
        let seed = TestSeed.value(128)
        var generator = SplitMix64(seed: seed)
        var stored: [UUID] = []
        for round in 0..<25 {
            if round % 3 == 2, !stored.isEmpty {
                let victims = Array(
                    stored.shuffled(using: &generator).prefix(Int.random(in: 1...20, using: &generator)))
                _ = try await writer.delete("stepCount", subject: "anna", .uuids(victims))
                stored.removeAll { victims.contains($0) }
            } else {
                // Samples up to 30 h long straddle day boundaries (DST on 2024-03-10): pro-rating matters.
                let start =
                    Self.day0 + Int64.random(in: -5...20, using: &generator) * Micros.day
                    + Int64.random(in: 0..<1440, using: &generator) * Micros.minute
                let batch = Self.batch(
                    start, count: Int.random(in: 1...30, using: &generator), every: 47,
                    minutes: Int64.random(in: 1...1800, using: &generator),
                    source: Bool.random(using: &generator) ? Self.phone : Self.watch)
                _ = try await writer.insert(batch)
                stored += (0..<batch.count).map(batch.uuid(row:))
            }
            let fresh = try await writer.collection(query).buckets
            // Updates may be coalesced and arrive a little after the acknowledgement: wait for them.
            try await waitUntil(
                "round \(round) (seed \(seed)): the pushed buckets to equal a fresh query; they differ in "
                    + Self.differences(received.withLock { $0.sorted }, fresh)
            ) { Self.agree(received.withLock { $0.sorted }, fresh) }
        }
        await hkd.stop()
    }

    /// The buckets in one of `a` and `b` but not both, as `start-end:sum`.
    static func differences(_ a: [Statistics], _ b: [Statistics]) -> String {
        let differing = Set(a).symmetricDifference(b).sorted { $0.start < $1.start }
        return differing.map { "\($0.start)-\($0.end):\($0.figures.sum ?? -1)" }.joined(separator: ", ")
    }

    /// Same buckets with the same sums up to floating-point rounding: a bucket recomputed over a shorter range
    /// adds its pro-rated parts in another order, so the last bit may differ (about 1e-15 relative).
    static func agree(_ a: [Statistics], _ b: [Statistics]) -> Bool {
        a.count == b.count
            && zip(a, b).allSatisfy { x, y in
                guard x.start == y.start, x.end == y.end, let p = x.figures.sum, let q = y.figures.sum else {
                    return false
                }
                return abs(p - q) <= 1e-9 * max(1, abs(q))
            }
    }

    @Test("collection subscribers of one query under a burst of inserts get coalesced updates and the fresh buckets")
    func liveCollectionBurstCoalesces() async throws {
        let hkd = try await TestServer()
        let writer = hkd.client(name: "writer")
        let watchers = (0..<6).map { hkd.client(name: "watcher-\($0)") }
        defer {
            writer.close()
            for watcher in watchers { watcher.close() }
        }
        let query = CollectionQuery(
            subject: "anna", type: "stepCount", options: [.cumulativeSum], anchor: Self.day0,
            interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin")
        let tables = (0..<watchers.count).map { _ in TableBox() }
        let updates = (0..<watchers.count).map { _ in Counter() }
        let readers = watchers.indices.map { index in
            Task {
                for try await update in watchers[index].liveCollection(query) {
                    tables[index].table.withLock { _ = $0.apply(update) }
                    updates[index].value.add(1, ordering: .relaxed)
                }
            }
        }
        defer { for reader in readers { reader.cancel() } }
        try await waitUntil("every subscriber's first table") {
            !updates.contains { $0.value.load(ordering: .relaxed) == 0 }
        }
        // 200 batches in flight at once, over 20 days (DST on 2024-03-31 in Berlin): far faster than one
        // update per 50 ms per subscription.
        let inserts = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for k in 0..<inserts {
                group.addTask {
                    let start = Self.day0 + Int64(k % 20) * Micros.day + Int64(k / 20) * 97 * Micros.minute
                    _ = try await writer.insert(Self.batch(start, count: 5, every: 31, minutes: 45))
                }
            }
            try await group.waitForAll()
        }
        let fresh = try await writer.collection(query).buckets
        let behind = { tables.indices.filter { !Self.agree(tables[$0].table.withLock { $0.sorted }, fresh) } }
        try await waitUntil("every subscriber to end on the fresh buckets; behind: \(behind())") { behind().isEmpty }
        for (index, table) in tables.enumerated() {
            #expect(
                Self.agree(table.table.withLock { $0.sorted }, fresh), "subscriber \(index) ends on the fresh buckets")
            #expect(updates[index].value.load(ordering: .relaxed) < inserts, "changes coalesced into fewer updates")
        }
        await hkd.stop()
    }

    @Test("many subscribers on many connections all receive every change, in order")
    func manySubscribers() async throws {
        let hkd = try await TestServer()
        let writer = hkd.client(name: "writer")
        defer { writer.close() }
        let clients = (0..<12).map { hkd.client(name: "subscriber-\($0)") }
        defer { for client in clients { client.close() } }
        let expected = Mutex<[UUID]>([])
        let batches = (0..<20).map { Self.batch(Self.day0 + Int64($0) * Micros.day, count: 40) }
        try await withThrowingTaskGroup(of: [UUID].self) { group in
            let ready = Counter()
            for client in clients {
                group.addTask {
                    var received: [UUID] = []
                    var stream = client.anchoredChanges(ChangesQuery(subject: "anna", type: "stepCount"))
                        .makeAsyncIterator()
                    while received.count < 800, let changes = try await stream.next() {
                        if changes.added.count == 0, received.isEmpty { ready.value.add(1, ordering: .relaxed) }
                        received += (0..<changes.added.count).map(changes.added.uuid(row:))
                    }
                    return received
                }
            }
            try await waitUntil("every subscriber's empty first result") {
                ready.value.load(ordering: .relaxed) >= clients.count
            }
            for batch in batches {
                _ = try await writer.insert(batch)
                expected.withLock { $0 += (0..<batch.count).map(batch.uuid(row:)) }
            }
            for try await received in group { #expect(received == expected.withLock { $0 }) }
        }
        await hkd.stop()
    }

    @Test("a subscriber that never reads is disconnected with a reason; memory stays bounded; others go on")
    func stalledSubscriberIsDisconnected() async throws {
        let hkd = try await TestServer(arguments: ["--subscriber-timeout", "1"])
        let writer = hkd.client(name: "writer")
        defer { writer.close() }
        // A raw connection: hello and 200 anchored subscriptions; it reads until hkd confirmed all 200 (they are in
        // place before the inserts), then never reads a byte again.
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: hkd.port)
        defer { socket.close() }
        _ = try RawHandshake.perform(socket, token: hkd.token, name: "stalled")
        let encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for id in 1...200 {
            encoder.encode(
                Message.subscribe(Subscribe(.anchored(ChangesQuery(subject: "anna", type: "stepCount"))))
                    .frame(requestID: UInt32(id)), into: &bytes)
        }
        try socket.write(bytes)
        var confirmed = 0
        var decoder = FrameDecoder()
        while confirmed < 200 {
            let chunk = try socket.read(maxBytes: 4096, timeout: .seconds(30))
            try #require(!chunk.isEmpty, "hkd closed the connection after \(confirmed) subscriptions")
            decoder.append(chunk)
            while let frame = try decoder.next() {
                if case .subscribed = try Message.decode(frame) { confirmed += 1 }
            }
        }
        // A well-behaved observer on another connection.
        let watcher = hkd.client(name: "watcher")
        defer { watcher.close() }
        var observed = watcher.observe("stepCount", subject: "anna").makeAsyncIterator()
        // Its connection is in before the inserts (it subscribes as soon as it is; it only has to be in place
        // before the last of the many inserts below to see an update).
        try await waitUntil("the stalled and the watcher's connections to be accepted") {
            try await writer.serverInfo().connections >= 3
        }
        let before = Self.residentBytes(of: hkd)
        let seed = TestSeed.value(282)
        var generator = SplitMix64(seed: seed)
        var disconnected = false
        for round in 0..<60 {
            var batch = Self.batch(Self.day0 + Int64(round) * Micros.day, count: 5000, every: 1, minutes: 1)
            batch.values = batch.values.map { _ in Double.random(in: 0...1e6, using: &generator) }
            _ = try await writer.insert(batch)
            if round % 5 == 4, hkd.logText.contains("were not read") {
                disconnected = true
                break
            }
        }
        // Generous bounds: under a loaded machine (a debug build encoding 200 subscribers' updates) the queue
        // fills slowly; the waits end as soon as the state is reached.
        if !disconnected { try await hkd.waitForLog("were not read", timeout: .seconds(90)) }
        let grown = Self.residentBytes(of: hkd) - before
        #expect(grown < 200 << 20, "hkd grew by \(grown >> 20) MiB (seed \(seed))")
        #expect(try await observed.next() != nil, "the other subscriber still gets updates")
        // The closed connection lingers at most 2 s trying to flush, then only writer and watcher remain.
        try await waitUntil("only the writer's and the watcher's connections to remain") {
            try await writer.serverInfo().connections == 2
        }
        await hkd.stop()
    }

    /// Resident bytes of the hkd process.
    static func residentBytes(of hkd: TestServer) -> Int {
        guard let pid = hkd.processIdentifier,
            let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8),
            let pages = Int(text.split(separator: " ")[1])
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// A counter shared between tasks.
/// A live collection's table filled from a reader task.
final class TableBox: Sendable {
    let table = Mutex(LiveCollectionTable())
}

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}
