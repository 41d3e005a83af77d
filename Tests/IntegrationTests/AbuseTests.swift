import Foundation
import HealthClient
import HealthCodec
import HealthModel
import HealthPosix
import HealthWire
import Testing

/// Clients that misbehave on purpose (resets mid-request, slow senders, hoarders): hkd survives each of them and
/// keeps serving everyone else.
@Suite("abusive clients", .serialized)
struct AbuseTests {
    static let t0: Int64 = 1_700_000_000_000_000

    /// A raw connection that has completed the handshake (authorization is off in these servers).
    static func session(port: Int) throws -> ClientSocket {
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        try socket.write(FrameEncoder().encode(Message.hello(Hello(clientName: "abuser", token: "")).frame(requestID: 0)))
        return socket
    }

    /// Subscribe requests of every kind, some of which fail on the server (bad zone, unknown type).
    static func subscribeRequest(_ index: Int) -> Message {
        let collection = CollectionQuery(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: t0, interval: CalendarInterval(1, .hour),
            timeZone: index % 4 == 2 ? "Mars/Olympus_Mons" : "Europe/Berlin")
        switch index % 4 {
        case 0, 2: return .subscribe(Subscribe(.collection(collection)))
        case 1: return .subscribe(Subscribe(.anchored(ChangesQuery(subject: "anna", type: "stepCount", anchor: 0))))
        default: return .subscribe(Subscribe(.observer(subject: "anna", type: "noSuchType", filter: .all)))
        }
    }

    @Test("a thousand connections that subscribe and then reset leave hkd serving")
    func subscribeThenReset() async throws {
        let hkd = try await HKDProcess(arguments: ["--auth", "off"])
        let client = hkd.client()
        defer { client.close() }
        _ = try await client.insert(try EndToEndTests.steps(subject: "anna", minutes: 600))
        let port = hkd.port
        try await Task.detached {
            for index in 0..<1000 {
                let socket = try Self.session(port: port)
                let frame = FrameEncoder().encode(Self.subscribeRequest(index).frame(requestID: 1))
                try socket.write(frame)
                // Every fifth connection waits for the welcome first, so resets land at different moments.
                if index % 5 == 0 { _ = try? socket.read(maxBytes: 4096, timeout: .seconds(5)) }
                socket.resetAndClose()
            }
        }.value
        #expect(hkd.isRunning, "\(hkd.logText.suffix(2000))")
        try await client.ping()
        #expect(try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum).statistics.figures.sum == 2700)
        await hkd.stop()
    }
}
