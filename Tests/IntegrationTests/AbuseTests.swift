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

    /// Reads frames from `socket` until one with `requestID` arrives, and decodes it.
    static func reply(to requestID: UInt32, on socket: ClientSocket) throws -> Message {
        var decoder = FrameDecoder()
        while true {
            let chunk = try socket.read(maxBytes: 65_536, timeout: .seconds(10))
            if chunk.isEmpty { throw HealthError(.internalError, "the server closed the connection") }
            decoder.append(chunk)
            while let frame = try decoder.next() {
                if frame.requestID == requestID { return try Message.decode(frame) }
            }
        }
    }

    @Test("a sample at Int64.min is refused with invalidSample naming the row, and hkd restarts")
    func extremeTimestamps() async throws {
        let hkd = try await HKDProcess(arguments: ["--auth", "off"])
        let socket = try Self.session(port: hkd.port)
        defer { socket.close() }
        _ = try Self.reply(to: 0, on: socket)  // welcome
        for (id, (start, end)) in [(Int64.min, Int64(0)), (Int64.min + 1, -1), (0, Int64.max)].enumerated() {
            var batch = SampleBatch(batchID: UInt64(id + 1), subject: "anna", typeIdentifier: "stepCount", unit: "count")
            batch.append(start: 0, end: 60_000_000, value: 3, source: SourceInfo(name: "Watch"))
            batch.append(start: start, end: end, value: 1, source: SourceInfo(name: "Watch"))
            try socket.write(FrameEncoder().encode(Message.insert(Insert(batch: batch)).frame(requestID: UInt32(id + 1))))
            guard case .error(let error) = try Self.reply(to: UInt32(id + 1), on: socket) else {
                Issue.record("batch \(id + 1) was accepted")
                continue
            }
            #expect(error.code == ErrorCode.invalidSample.rawValue)
            #expect(error.message.contains("row 1") && error.message.contains("0001–9999"), "\(error.message)")
            #expect(error.retryable == false)
        }
        let directory = hkd.dataDirectory
        await hkd.stop()
        let restarted = try await HKDProcess(dataDirectory: directory, arguments: ["--auth", "off"])
        let client = restarted.client()
        defer { client.close() }
        #expect(try await client.samples("stepCount", subject: "anna").count == 0)
        _ = try await client.insert(try EndToEndTests.steps(subject: "anna", minutes: 3))
        #expect(try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum).statistics.figures.sum == 3)
        await restarted.stop()
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
