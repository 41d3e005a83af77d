import Foundation
import HealthClient
import HealthModel
import HealthPosix
import HealthWire
import Synchronization
import TestSupport
import Testing

/// Subscriptions outlive any outage of hkd: they reconnect with jittered backoff for as long as they are iterated,
/// and resume where they were (HEALTHKIT.md §7, §9).
@Suite("subscriptions across a long outage of hkd", .serialized)
struct LongOutageTests {
    /// Quick, seeded backoff so the test is reproducible and the reconnect comes soon after hkd is back.
    static let reconnect = ReconnectPolicy(
        initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(500), jitter: 0.5, seed: 0x5EED)

    /// The events a subscription yielded, in order, each with the instant it arrived.
    final class Recording<Element: Sendable>: Sendable {
        private let events = Mutex<[(at: ContinuousClock.Instant, event: SubscriptionEvent<Element>)]>([])

        func append(_ event: SubscriptionEvent<Element>) { events.withLock { $0.append((.now, event)) } }

        var updates: [Element] {
            events.withLock { $0.compactMap { if case .update(let e) = $0.event { e } else { nil } } }
        }

        var reconnects: [(at: ContinuousClock.Instant, reconnection: Reconnection)] {
            events.withLock { $0.compactMap { if case .reconnected(let r) = $0.event { ($0.at, r) } else { nil } } }
        }

        var disconnects: Int {
            events.withLock { $0.filter { if case .disconnected = $0.event { true } else { false } }.count }
        }
    }

    @Test(
        "a live collection and an anchored subscription survive hkd being down: nothing lost or repeated, one reconnect each",
        arguments: [30, 160])
    func survivesOutage(attempts: Int) async throws {
        let first = try await HKDProcess(arguments: ["--auth", "off"])
        let writer = LiveReconnectTests.patientClient(first.port, name: "writer")
        let watcher = HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: first.port, clientName: "watcher", requestTimeout: .seconds(30),
                reconnect: Self.reconnect))
        defer { LiveReconnectTests.cleanUp(writer, watcher) }
        let query = CollectionQuery(
            subject: "anna", type: "stepCount", options: [.cumulativeSum], anchor: LiveUpdateTests.day0,
            interval: CalendarInterval(1, .day), timeZone: "America/New_York")
        let changes = Recording<ChangesResult>()
        let buckets = Recording<LiveCollectionUpdate>()
        let anchored = Task {
            for try await event in watcher.subscribe(.anchoredChanges(ChangesQuery(subject: "anna", type: "stepCount")))
            {
                changes.append(event)
            }
        }
        let collection = Task {
            for try await event in watcher.subscribe(.collection(query)) { buckets.append(event) }
        }
        defer {
            anchored.cancel()
            collection.cancel()
        }
        func received() -> [UUID] { changes.updates.flatMap { c in (0..<c.added.count).map(c.added.uuid(row:)) } }
        func table() -> [Statistics] {
            var table = LiveCollectionTable()
            for update in buckets.updates { table.apply(update) }
            return table.sorted
        }

        let before = LiveUpdateTests.batch(LiveUpdateTests.day0, count: 3)
        _ = try await writer.insert(before)
        let beforeUUIDs = (0..<before.count).map(before.uuid(row:))
        let freshBefore = try await writer.collection(query).buckets
        try await waitUntil("received() == beforeUUIDs") { received() == beforeUUIDs }
        try await waitUntil("LiveUpdateTests.agree(table(), freshBefore)") {
            LiveUpdateTests.agree(table(), freshBefore)
        }

        #expect(await first.stop() == 0)
        let stopped = ContinuousClock.now
        try await waitUntil("changes.disconnects == 1 && buckets.disconnects == 1") {
            changes.disconnects == 1 && buckets.disconnects == 1
        }
        // The outage is counted in refused reconnect attempts, not waited out: a listener on hkd's port closes every
        // connection it accepts until the watcher has tried that many times, then hkd comes back on the port.
        let refuser = try RefusingListener(port: first.port)
        try await waitUntil(timeout: .seconds(120), "\(attempts) refused reconnect attempts") {
            refuser.refused >= attempts
        }
        refuser.stop()
        let outage = ContinuousClock.now - stopped
        let second = try await LiveReconnectTests.restart(first)
        let restarted = ContinuousClock.now
        try await waitUntil("!changes.reconnects.isEmpty && !buckets.reconnects.isEmpty") {
            !changes.reconnects.isEmpty && !buckets.reconnects.isEmpty
        }

        let after = LiveUpdateTests.batch(LiveUpdateTests.day0 + Micros.day, count: 2)
        _ = try await writer.insert(after)
        let afterUUIDs = (0..<after.count).map(after.uuid(row:))
        let freshAfter = try await writer.collection(query).buckets
        // Exact equality: a change lost or replayed by the resubscription would never make these true.
        try await waitUntil("received() == beforeUUIDs + afterUUIDs") { received() == beforeUUIDs + afterUUIDs }
        try await waitUntil("LiveUpdateTests.agree(table(), freshAfter)") { LiveUpdateTests.agree(table(), freshAfter) }

        for (name, reconnects, disconnects) in [
            ("anchored", changes.reconnects, changes.disconnects),
            ("collection", buckets.reconnects, buckets.disconnects),
        ] {
            #expect(reconnects.count == 1, "\(name): \(reconnects.count) reconnect events")
            #expect(disconnects == 1, "\(name): \(disconnects) disconnect events")
            guard let (at, reconnection) = reconnects.first else { continue }
            #expect(reconnection.downtime >= outage)
            // The subscriptions' connection attempts, all refused but the last (each attempt may open more than one).
            #expect(reconnection.attempts > 1 && reconnection.attempts <= attempts + 1)
            #expect(reconnection.cause.code == .connectionLost)
            print(
                "outage of \(attempts) refused attempts (\(outage)), \(name): back \(at - restarted) after hkd, downtime \(reconnection.downtime), "
                    + "\(reconnection.attempts) attempts")
        }
        // The collection's first update after the reconnect carried the whole table.
        let replaced = buckets.updates.filter(\.replacesAll).count
        #expect(replaced == 2)
        await second.stop()
    }
}
/// Stands in for a server that is down but reachable: accepts on a port and closes every connection at once,
/// counting them (each is one reconnect attempt of a client).
final class RefusingListener: Sendable {
    private let group: EventLoopGroup
    private let tcp: TCPServer
    private let count = HealthPosix.Counter()

    /// How many connections it has refused.
    var refused: Int { Int(count.value) }

    init(port: Int) throws {
        group = try EventLoopGroup(threads: 1, name: "refuser")
        let count = count
        tcp = try TCPServer.start(group: group, configuration: TCPServerConfiguration(host: "127.0.0.1", port: port)) {
            _ in Refuser(count: count)
        }
    }

    func stop() {
        tcp.stop()
        group.shutdown()
    }

    private final class Refuser: ConnectionHandler, Sendable {
        let count: HealthPosix.Counter
        init(count: HealthPosix.Counter) { self.count = count }
        func connectionDidOpen(_ connection: Connection) {
            count.add()
            connection.close()
        }
        func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {}
        func connectionDidClose(_ connection: Connection, error: SystemError?) {}
    }
}
