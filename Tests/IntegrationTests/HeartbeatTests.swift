import Foundation
import Glibc
import HealthClient
import HealthModel
import TestSupport
import Testing

/// A subscription notices a server that stops answering without closing its connection (frozen with SIGSTOP: the
/// TCP connection stays open, like a half-open one after a network change) and reconnects once it answers again.
@Suite("client heartbeat against a frozen hkd", .serialized)
struct HeartbeatIntegrationTests {
    @Test("a frozen server is given up after twice the heartbeat; the subscription reconnects and misses nothing")
    func frozenServer() async throws {
        let hkd = try await TestServer(arguments: ["--auth", "off"])
        defer { try? FileManager.default.removeItem(atPath: hkd.dataDirectory) }
        let writer = LiveReconnectTests.patientClient(hkd.port, name: "writer")
        let watcher = HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: hkd.port, clientName: "watcher", connectTimeout: .seconds(1),
                requestTimeout: .seconds(30), reconnect: LongOutageTests.reconnect, heartbeat: .seconds(1)))
        defer { LiveReconnectTests.cleanUp(writer, watcher) }
        let events = LongOutageTests.Recording<ChangesResult>()
        let task = Task {
            for try await event in watcher.subscribe(.anchoredChanges(ChangesQuery(subject: "anna", type: "stepCount")))
            {
                events.append(event)
            }
        }
        defer { task.cancel() }
        func received() -> [UUID] { events.updates.flatMap { c in (0..<c.added.count).map(c.added.uuid(row:)) } }

        let before = LiveUpdateTests.batch(LiveUpdateTests.day0, count: 3)
        _ = try await writer.insert(before)
        try await waitUntil("the first batch arrives") { received().count == 3 }

        let pid = try #require(hkd.processIdentifier)
        #expect(kill(pid, SIGSTOP) == 0)
        let frozen = ContinuousClock.now
        try await waitUntil(timeout: .seconds(20), "the watcher gives the frozen server up") { events.disconnects == 1 }
        let noticed = ContinuousClock.now - frozen
        #expect(kill(pid, SIGCONT) == 0)
        #expect(noticed >= .seconds(1), "not before a ping went unanswered: \(noticed)")
        try await waitUntil(timeout: .seconds(30), "the watcher reconnects") { !events.reconnects.isEmpty }

        let after = LiveUpdateTests.batch(LiveUpdateTests.day0 + Micros.day, count: 2)
        _ = try await writer.insert(after)
        let expected = (0..<before.count).map(before.uuid(row:)) + (0..<after.count).map(after.uuid(row:))
        try await waitUntil("every change arrives once") { received() == expected }
        #expect(events.reconnects.first?.reconnection.cause.code == .connectionLost)
        #expect(await hkd.stop() == 0)
    }
}
