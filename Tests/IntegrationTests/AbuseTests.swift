import Foundation
import HealthClient
import HealthCodec
import HealthModel
import HealthPosix
import HealthWire
import TestSupport
import Testing

/// Clients that misbehave on purpose (resets mid-request, slow senders, hoarders): hkd survives each of them and
/// keeps serving everyone else.
@Suite("abusive clients", .serialized)
struct AbuseTests {
    static let t0: Int64 = 1_700_000_000_000_000

    /// A raw connection that has completed the handshake (authorization is off in these servers).
    static func session(port: Int) throws -> ClientSocket {
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        try socket.write(
            FrameEncoder().encode(
                Message.hello(Hello(clientName: "abuser", tokenID: 0, clientNonce: [])).frame(requestID: 0)))
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
        let hkd = try await TestServer(arguments: ["--auth", "off"])
        let socket = try Self.session(port: hkd.port)
        defer { socket.close() }
        _ = try Self.reply(to: 0, on: socket)  // welcome
        for (id, (start, end)) in [(Int64.min, Int64(0)), (Int64.min + 1, -1), (0, Int64.max)].enumerated() {
            var batch = SampleBatch(
                batchID: UInt64(id + 1), subject: "anna", typeIdentifier: "stepCount", unit: "count")
            batch.append(start: 0, end: 60_000_000, value: 3, source: SourceInfo(name: "Watch"))
            batch.append(start: start, end: end, value: 1, source: SourceInfo(name: "Watch"))
            try socket.write(
                FrameEncoder().encode(Message.insert(Insert(batch: batch)).frame(requestID: UInt32(id + 1))))
            guard case .error(let error) = try Self.reply(to: UInt32(id + 1), on: socket) else {
                Issue.record("batch \(id + 1) was accepted")
                continue
            }
            #expect(error.code == ErrorCode.invalidSample.rawValue)
            #expect(error.message.contains("row 1") && error.message.contains("0001–9999"), "\(error.message)")
            #expect(error.retryable == false)
        }
        await hkd.stop()
        let restarted = try await hkd.restart()
        let client = restarted.client()
        defer { client.close() }
        #expect(try await client.samples("stepCount", subject: "anna").count == 0)
        _ = try await client.insert(try EndToEndTests.steps(subject: "anna", minutes: 3))
        #expect(
            try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum)?.statistics.figures.sum
                == 3)
        await restarted.stop()
    }

    /// Subscribe requests of every kind, some of which fail on the server (bad zone, unknown type).
    static func subscribeRequest(_ index: Int) -> Message {
        let collection = CollectionQuery(
            subject: "anna", type: "stepCount", options: .cumulativeSum, anchor: t0,
            interval: CalendarInterval(1, .hour),
            timeZone: index % 4 == 2 ? "Mars/Olympus_Mons" : "Europe/Berlin")
        switch index % 4 {
        case 0, 2: return .subscribe(Subscribe(.collection(collection)))
        case 1: return .subscribe(Subscribe(.anchored(ChangesQuery(subject: "anna", type: "stepCount", anchor: 0))))
        default: return .subscribe(Subscribe(.observer(subject: "anna", type: "noSuchType", filter: .all)))
        }
    }

    @Test("a thousand connections that subscribe and then reset leave hkd serving")
    func subscribeThenReset() async throws {
        let hkd = try await TestServer(arguments: ["--auth", "off"])
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
        #expect(
            try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum)?.statistics.figures.sum
                == 2700)
        await hkd.stop()
    }

    /// Pings with a fresh single-attempt client until one succeeds or `limit` passes; the time it took.
    static func firstSuccessfulPing(port: Int, within limit: Duration) async -> Duration? {
        let started = ContinuousClock.now
        do {
            try await waitUntil(timeout: limit, "a ping to succeed") {
                let client = HealthClient(
                    ClientConfiguration(port: port, token: "", requestTimeout: .seconds(2), retry: .none))
                defer { client.close() }
                return (try? await client.ping()) != nil
            }
        } catch {
            return nil
        }
        return ContinuousClock.now - started
    }

    @Test("slow senders that never finish their handshake lose their slots to the handshake deadline")
    func slowloris() async throws {
        let hkd = try await TestServer(arguments: [
            "--auth", "off", "--max-connections", "10", "--handshake-timeout", "1",
        ])
        let port = hkd.port
        // Ten connections take every slot, each with a hello it never finishes (that bytes trickling in do not
        // move the deadline is ConnectionDeadlineTests' handshakeDeadline, with made-up instants).
        let hello = FrameEncoder().encode(
            Message.hello(Hello(clientName: "slow", tokenID: 0, clientNonce: [])).frame(requestID: 0))
        let sockets = try (0..<10).map { _ in try ClientSocket.connect(host: "127.0.0.1", port: port) }
        for socket in sockets { try socket.write(Array(hello.dropLast()), timeout: .seconds(5)) }
        defer { for socket in sockets { socket.close() } }
        let waited = await Self.firstSuccessfulPing(port: port, within: .seconds(20))
        #expect(waited != nil, "a well-behaved client was refused for 20 s")
        #expect(hkd.logText.contains("the handshake did not complete within 1 s"))
        await hkd.stop()
    }

    @Test("beyond the handshake quota the connection lingering longest makes room; a burst of clients is never refused")
    func handshakeQuota() async throws {
        let hkd = try await TestServer(arguments: ["--auth", "off", "--max-handshaking", "3"])
        let observer = hkd.client()
        defer { observer.close() }
        try await observer.ping()
        let silent = try (0..<3).map { _ in try ClientSocket.connect(host: "127.0.0.1", port: hkd.port) }
        defer { for socket in silent { socket.close() } }
        // Synchronise on the server having accepted all three (the loops accept in any order).
        try await waitUntil("hkd to accept the three silent connections") {
            try await observer.serverInfo().connections >= 4
        }
        // Real clients keep getting in; once the three have lingered past the quota's grace, the next client's
        // handshake closes the one lingering longest to make room.
        try await waitUntil("a lingering connection to be closed") {
            #expect(await Self.firstSuccessfulPing(port: hkd.port, within: .seconds(10)) != nil)
            return hkd.logText.contains("this one lingered longest")
        }
        var evicted = 0
        for socket in silent {
            let bytes = (try? socket.read(maxBytes: 4096, timeout: .milliseconds(200))) ?? []
            var decoder = FrameDecoder()
            decoder.append(bytes)
            if let frame = try? decoder.next(), case .error(let reply)? = try? Message.decode(frame),
                reply.code == ErrorCode.tooManyConnections.rawValue, reply.retryable
            {
                evicted += 1
            }
        }
        #expect(evicted >= 1)

        // Twenty clients connecting at once (far beyond the quota of 3, all young) are all served.
        let port = hkd.port
        let served = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let client = HealthClient(ClientConfiguration(port: port, token: "", retry: .none))
                    defer { client.close() }
                    return (try? await client.ping()) != nil
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(served == 20)
        await hkd.stop()
    }

    @Test("frames being received hold the server-wide byte budget: many half-sent large frames stay bounded")
    func bufferedBytesBudget() async throws {
        let hkd = try await TestServer(arguments: ["--auth", "off", "--max-buffered-bytes", "16777216"])
        let client = hkd.client()
        defer { client.close() }
        let before = try await client.serverInfo().residentBytes
        let port = hkd.port
        let sockets = try await Task.detached {
            try (0..<12).map { _ -> ClientSocket in
                let socket = try Self.session(port: port)
                // An insert frame declaring 15 MiB, of which 12 MiB are sent; the rest never comes.
                try socket.write(RawFrame.header(kind: 0x10, length: 15 << 20))
                let chunk = [UInt8](repeating: 0x41, count: 1 << 20)
                for _ in 0..<12 {
                    do { try socket.write(chunk, timeout: .milliseconds(300)) } catch { break }
                }
                return socket
            }
        }.value
        defer { for socket in sockets { socket.close() } }
        let after = try await client.serverInfo().residentBytes
        let grown = Int64(after) - Int64(before)
        // Without the budget this holds 12 × 12 MiB = 144 MiB; with it, about one frame's 15 MiB.
        #expect(grown < 64 << 20, "resident memory grew by \(grown >> 20) MiB")
        try await client.ping()
        await hkd.stop()
    }

    @Test("a client that never reads its replies is disconnected once they stay unread past the deadline")
    func unreadReplies() async throws {
        let hkd = try await TestServer(arguments: ["--auth", "off", "--unread-replies-timeout", "1"])
        let client = hkd.client()
        defer { client.close() }
        _ = try await client.insert(try EndToEndTests.steps(subject: "anna", minutes: 50_000))
        let socket = try Self.session(port: hkd.port)
        defer { socket.close() }
        let query = Message.sampleQuery(SampleQuery(subject: "anna", type: "stepCount"))
        var requests: [UInt8] = []
        for id in 1...40 { requests += FrameEncoder().encode(query.frame(requestID: UInt32(id))) }
        try socket.write(requests)
        // 40 replies of 50,000 samples fill the reply queue; nothing reads them.
        try await hkd.waitForLog("replies were not read for 1 s")
        try await client.ping()
        await hkd.stop()
    }

}

/// Start-up order and settings from the environment, against the real hkd.
@Suite("hkd start-up")
struct StartupTests {
    @Test("a port that is taken fails the start before a data directory or an admin token is created")
    func bindsFirst() async throws {
        let taken = try ListeningSocket.bind(host: "127.0.0.1", port: 0)
        defer { taken.close() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hkd-test-\(UUID().uuidString)")
            .path
        do {
            let hkd = try await HKDProcess(dataDirectory: directory, port: taken.address.port)
            await hkd.stop()
            Issue.record("hkd started on a taken port")
        } catch {
            #expect("\(error)".contains("cannot listen on 127.0.0.1:\(taken.address.port)"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test("settings come from a --config file; JSON logs parse line by line")
    func environmentAndConfigFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hkd-\(UUID().uuidString).conf").path
        try "auth = off\nlog-format = json\nmax-connections = 2\n".write(
            toFile: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let hkd = try await HKDProcess(arguments: ["--config", file])
        let first = HealthClient(ClientConfiguration(port: hkd.port, token: "", retry: .none))
        let second = HealthClient(ClientConfiguration(port: hkd.port, token: "", retry: .none))
        try await first.ping()  // auth is off: no token needed
        try await second.ping()
        let third = HealthClient(ClientConfiguration(port: hkd.port, token: "", retry: .none))
        await #expect(throws: HealthClientError.self) { try await third.ping() }
        for client in [first, second, third] { client.close() }
        await hkd.stop()
        for line in hkd.logText.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
            #expect(object?["time"]?.hasSuffix("Z") == true && object?["message"] != nil, "\(line)")
        }
    }
}
