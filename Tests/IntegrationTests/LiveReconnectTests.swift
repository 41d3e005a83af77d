import Foundation
import HealthClient
import HealthModel
import HealthWire
import Synchronization
import TestSupport
import Testing

/// Subscriptions outlive a restart of hkd: the client reconnects and subscribes again (HEALTHKIT.md §7, §9).
@Suite("subscriptions across a restart of hkd", .serialized)
struct LiveReconnectTests {
    /// A client that keeps retrying for ten seconds, long enough for hkd to come back.
    static func patientClient(_ port: Int, name: String, tls: TLSClientOptions? = nil) -> HealthClient {
        HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: port, clientName: name, requestTimeout: .seconds(30),
                retry: RetryPolicy(
                    budget: .seconds(10), initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(200)),
                tls: tls))
    }

    /// hkd (tokens off), and a writer and a watcher that wait for it across restarts.
    static func start() async throws -> (TestServer, writer: HealthClient, watcher: HealthClient) {
        let hkd = try await TestServer(arguments: ["--auth", "off"])
        return (hkd, patientClient(hkd.port, name: "writer"), patientClient(hkd.port, name: "watcher"))
    }

    /// hkd again on the port and data directory `stopped` had.
    static func restart(_ stopped: TestServer) async throws -> TestServer {
        try await stopped.restart(samePort: true)
    }

    /// Collects the UUIDs of anna's stepCount samples `watcher`'s anchored subscription delivers.
    static func collectChanges(_ watcher: HealthClient, into received: DeliveredUUIDs) -> Task<Void, any Error> {
        Task {
            for try await changes in watcher.anchoredChanges(ChangesQuery(subject: "anna", type: "stepCount")) {
                received.append((0..<changes.added.count).map(changes.added.uuid(row:)))
            }
        }
    }

    /// Inserts a batch and waits until it was delivered, restarts `first` on its port, inserts another and waits
    /// until exactly both were delivered; returns the restarted server and the two batches' UUIDs.
    static func insertAcrossRestart(_ first: TestServer, writer: HealthClient, received: DeliveredUUIDs)
        async throws -> (TestServer, [UUID], [UUID])
    {
        let before = LiveUpdateTests.batch(LiveUpdateTests.day0, count: 3)
        _ = try await writer.insert(before)
        let beforeUUIDs = (0..<before.count).map(before.uuid(row:))
        try await waitUntil("the first batch to arrive") { received.all == beforeUUIDs }

        #expect(await first.stop() == 0)
        let second = try await Self.restart(first)
        let after = LiveUpdateTests.batch(LiveUpdateTests.day0 + Micros.day, count: 2)
        _ = try await writer.insert(after)
        let afterUUIDs = (0..<after.count).map(after.uuid(row:))
        try await waitUntil("the batch after the restart, and nothing twice: \(received.all.count) came") {
            received.all == beforeUUIDs + afterUUIDs
        }
        return (second, beforeUUIDs, afterUUIDs)
    }

    static func cleanUp(_ clients: HealthClient...) {
        for client in clients { client.close() }
    }

    @Test("an anchored subscription resumes from its last anchor after hkd restarts: nothing lost, nothing repeated")
    func anchoredResumes() async throws {
        let (first, writer, watcher) = try await Self.start()
        defer { Self.cleanUp(writer, watcher) }
        let received = DeliveredUUIDs()
        let reader = Self.collectChanges(watcher, into: received)
        defer { reader.cancel() }
        let (second, beforeUUIDs, afterUUIDs) = try await Self.insertAcrossRestart(
            first, writer: writer, received: received)
        // Nothing more arrives: the resubscription started at the last anchor delivered, not at 0. Changes come
        // in order, so a repeat would arrive before a last batch: once that is in, nothing else may be.
        let last = LiveUpdateTests.batch(LiveUpdateTests.day0 + 2 * Micros.day, count: 1)
        _ = try await writer.insert(last)
        let lastUUIDs = (0..<last.count).map(last.uuid(row:))
        try await waitUntil("the last batch to arrive") {
            received.all.count >= (beforeUUIDs + afterUUIDs + lastUUIDs).count
        }
        #expect(received.all == beforeUUIDs + afterUUIDs + lastUUIDs)
        await second.stop()
    }

    @Test("after a restart an observer yields 0 once and a live collection is sent whole again")
    func observerAndCollectionResume() async throws {
        let (first, writer, watcher) = try await Self.start()
        defer { Self.cleanUp(writer, watcher) }
        let query = CollectionQuery(
            subject: "anna", type: "stepCount", options: [.cumulativeSum], anchor: LiveUpdateTests.day0,
            interval: CalendarInterval(1, .day), timeZone: "America/New_York")
        let anchors = Mutex<[UInt64]>([])
        let table = Mutex(LiveCollectionTable())
        let wholeTables = Atomic<Int>(0)
        let observer = Task {
            for try await anchor in watcher.observe("stepCount", subject: "anna") {
                anchors.withLock { $0.append(anchor) }
            }
        }
        let collector = Task {
            for try await update in watcher.liveCollection(query) {
                if update.replacesAll { wholeTables.add(1, ordering: .relaxed) }
                table.withLock { _ = $0.apply(update) }
            }
        }
        defer {
            observer.cancel()
            collector.cancel()
        }
        try await waitUntil("the first whole table") { wholeTables.load(ordering: .relaxed) == 1 }
        _ = try await writer.insert(LiveUpdateTests.batch(LiveUpdateTests.day0, count: 4))
        try await waitUntil("the observer to see the insert") { anchors.withLock { !$0.isEmpty } }

        await first.kill()
        let second = try await Self.restart(first)
        try await waitUntil("the whole table again after the restart") { wholeTables.load(ordering: .relaxed) == 2 }
        try await waitUntil("the observer to yield 0 after the restart") { anchors.withLock { $0.contains(0) } }
        _ = try await writer.insert(LiveUpdateTests.batch(LiveUpdateTests.day0 + Micros.day, count: 3))
        let fresh = try await writer.collection(query).buckets
        try await waitUntil("the live collection to equal a fresh query") {
            LiveUpdateTests.agree(table.withLock { $0.sorted }, fresh)
        }
        #expect(anchors.withLock { $0.filter { $0 == 0 }.count } == 1)
        await second.stop()
    }
}

/// The sample UUIDs a subscription delivered, in order (shared between its reader task and the test).
final class DeliveredUUIDs: Sendable {
    private let uuids = Mutex<[UUID]>([])

    /// Everything delivered so far.
    var all: [UUID] { uuids.withLock { $0 } }

    /// Records a delivery.
    func append(_ more: [UUID]) { uuids.withLock { $0 += more } }
}
