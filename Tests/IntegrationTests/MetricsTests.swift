import Foundation
import HealthClient
import HealthModel
import HealthPosix
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--metrics-listen`: the Prometheus page, health and readiness, against the real hkd and the real promtool.
@Suite("metrics and health endpoint", .serialized)
struct MetricsTests {

    /// The metrics port hkd logged.
    static func metricsPort(_ hkd: TestServer) throws -> Int {
        let log = hkd.logText
        let marker = try #require(log.range(of: "metrics on 127.0.0.1:"))
        return try #require(Int(log[marker.upperBound...].prefix { $0.isNumber }))
    }

    /// The value of the sample line `name` (with its labels, exactly as written), 0 when absent.
    static func value(_ name: String, in page: String) -> Double {
        for line in page.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1)) ?? .nan
        }
        return 0
    }

    /// `promtool check metrics` on `page`: its exit status and output.
    static func promtool(_ page: String) async throws -> (Int32, String) {
        let outcome = try await runTool(["promtool", "check", "metrics"], input: page)
        return (outcome.status, outcome.printed)
    }

    @Test("/metrics counts inserts exactly, passes promtool, and /healthz, /readyz and errors answer")
    func scrape() async throws {
        let hkd = try await HKDProcess(arguments: ["--auth", "off", "--metrics-listen", "127.0.0.1:0"])
        let port = try Self.metricsPort(hkd)
        let client = hkd.client()
        defer { client.close() }

        let before = try PlainHTTP.get("/metrics", port: port)
        #expect(before.status == "HTTP/1.1 200 OK")
        _ = try await client.insert(try EndToEndTests.steps(subject: "anna", minutes: 25))
        _ = try await client.insert(try EndToEndTests.steps(subject: "ben", minutes: 5))
        _ = try? await client.statistics("noSuchType", subject: "anna", options: .cumulativeSum)
        let after = try PlainHTTP.get("/metrics", port: port).body
        let samples = "hkd_ingested_samples_total{type=\"stepCount\"}"
        #expect(Self.value(samples, in: after) - Self.value(samples, in: before.body) == 30)
        #expect(Self.value("hkd_ingested_batches_total{type=\"stepCount\"}", in: after) == 2)
        #expect(Self.value("hkd_requests_total{kind=\"insert\"}", in: after) == 2)
        #expect(Self.value("hkd_request_duration_seconds_count{kind=\"insert\"}", in: after) == 2)
        #expect(Self.value("hkd_stored_samples{type=\"stepCount\"}", in: after) == 30)
        #expect(Self.value("hkd_subjects", in: after) == 2)
        #expect(Self.value("hkd_errors_total{code=\"unknownQuantityType\"}", in: after) == 1)
        #expect(Self.value("hkd_wal_fsync_duration_seconds_count", in: after) >= 2)
        #expect(Self.value("hkd_connections_open", in: after) >= 1)
        #expect(!after.contains("anna") && !after.contains("ben"), "subjects must not appear in labels")
        let (status, output) = try await Self.promtool(after)
        #expect(status == 0, "promtool: \(output)")

        #expect(try PlainHTTP.get("/healthz", port: port) == ("HTTP/1.1 200 OK", "ok\n"))
        #expect(try PlainHTTP.get("/readyz", port: port) == ("HTTP/1.1 200 OK", "ready\n"))
        #expect(try PlainHTTP.get("/nope", port: port).status == "HTTP/1.1 404 Not Found")
        #expect(try PlainHTTP.get("/metrics", port: port, method: "POST").status == "HTTP/1.1 405 Method Not Allowed")
        #expect(
            try PlainHTTP.get("/" + String(repeating: "x", count: 9000), port: port).status.hasPrefix("HTTP/1.1 431"))
        await hkd.stop()
    }

    @Test("idle and half-sent connections cannot keep probes out: /healthz, /readyz and /metrics answer at once")
    func probesGetThrough() async throws {
        let hkd = try await HKDProcess(arguments: ["--auth", "off", "--metrics-listen", "127.0.0.1:0"])
        let port = try Self.metricsPort(hkd)
        // Far more than the endpoint keeps waiting for a request (and than its old cap of 64, which locked probes
        // out until the peers left): silent ones, and ones that sent half a request.
        let idle = try (0..<200).map { _ in try ClientSocket.connect(host: "127.0.0.1", port: port) }
        defer { for socket in idle { socket.close() } }
        for socket in idle.suffix(50) {
            try socket.write(Array("GET /metrics HTTP/1.1\r\n".utf8), timeout: .seconds(5))
        }
        for _ in 0..<3 {
            let started = ContinuousClock.now
            #expect(try PlainHTTP.get("/healthz", port: port) == ("HTTP/1.1 200 OK", "ok\n"))
            #expect(try PlainHTTP.get("/readyz", port: port) == ("HTTP/1.1 200 OK", "ready\n"))
            #expect(try PlainHTTP.get("/metrics", port: port).status == "HTTP/1.1 200 OK")
            #expect(ContinuousClock.now - started < .seconds(3))
        }
        await hkd.stop()
    }

    /// What a connection to hkd's port got while hkd restarted.
    enum MainPortProbe: Equatable {
        /// The port refused the connection: hkd does not listen (yet).
        case refused
        /// The handshake completed.
        case answered
        /// The port accepted the connection, and then the handshake failed.
        case acceptedThenFailed(String)
    }

    /// Connects to hkd's port and performs the handshake (`--auth off`).
    static func probeMainPort(_ port: Int) -> MainPortProbe {
        let socket: ClientSocket
        do {
            socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        } catch {
            return error.code == ECONNREFUSED ? .refused : .acceptedThenFailed("connect: \(error)")
        }
        defer { socket.close() }
        do {
            _ = try RawHandshake.perform(socket, token: "", name: "probe")
            return .answered
        } catch {
            return .acceptedThenFailed("\(error)")
        }
    }

    /// The restarted server once ``TestServer/restart(arguments:samePort:)`` returned, or its error.
    final class Restarted: Sendable {
        let outcome = Mutex<Result<TestServer, any Error>?>(nil)
    }

    @Test("hkd listens only once it answers: while it recovers its port refuses and /readyz says starting")
    func readyExactly() async throws {
        let arguments = ["--auth", "off", "--snapshot-interval", "0", "--metrics-listen", "127.0.0.1:0"]
        let first = try await HKDProcess(arguments: arguments)
        let metricsPort = try Self.metricsPort(first)
        let client = first.client()
        // A log to replay at the restart (killed: no snapshot at shutdown), so that starting takes a while.
        _ = try await client.insert(try EndToEndTests.steps(subject: "anna", minutes: 100_000))
        client.close()
        await first.kill()

        // Whether a probe falls inside the start depends on the machine's load: up to three restarts to see one.
        var stopped: TestServer = first
        var hkd: TestServer?
        var seen: [String] = []
        for _ in 1...3 {
            let (restarted, rounds) = try await Self.observeRestart(of: stopped, metricsPort: metricsPort)
            hkd = restarted
            seen = rounds.map { "\($0.readyz?.status ?? "-") \($0.main)" }
            if rounds.contains(where: Self.sawStarting) { break }
            await restarted.kill()
            stopped = restarted
            seen = []
        }
        #expect(!seen.isEmpty, "no round of three restarts saw hkd starting")
        await hkd?.stop()
    }

    /// Whether a probe round saw hkd starting: `/readyz` answering "starting" while the port refused connections.
    static func sawStarting(_ round: ProbeRound) -> Bool {
        round.main == .refused && round.readyz?.status == "HTTP/1.1 503 Service Unavailable"
            && round.readyz?.body.hasPrefix("starting:") == true
    }

    typealias ProbeRound = (readyz: (status: String, body: String)?, main: MainPortProbe)

    /// Restarts the stopped `server` on its ports and probes `/readyz` and the main port until it answers,
    /// checking every round: the port never accepts a connection it does not serve, and ready means served.
    static func observeRestart(of server: TestServer, metricsPort: Int) async throws -> (TestServer, [ProbeRound]) {
        let restarted = Restarted()
        let restarting = Task {
            let outcome: Result<TestServer, any Error>
            do {
                outcome = .success(
                    try await server.restart(
                        arguments: [
                            "--auth", "off", "--snapshot-interval", "0", "--metrics-listen", "127.0.0.1:\(metricsPort)",
                        ],
                        samePort: true))
            } catch {
                outcome = .failure(error)
            }
            restarted.outcome.withLock { $0 = outcome }
        }
        // Each round: /readyz (nil while nothing listens on the metrics port), then a connection to the port.
        var rounds: [ProbeRound] = []
        try await waitUntil(timeout: .seconds(120), "hkd to restart and answer") {
            let finished = restarted.outcome.withLock { $0 != nil }
            let readyz = try? PlainHTTP.get("/readyz", port: metricsPort)
            rounds.append((readyz, Self.probeMainPort(server.port)))
            return finished && rounds.last?.main == .answered && readyz?.status == "HTTP/1.1 200 OK"
        }
        await restarting.value
        let hkd = try #require(try restarted.outcome.withLock { $0 }?.get())
        for (index, round) in rounds.enumerated() {
            if case .acceptedThenFailed(let failure) = round.main {
                Issue.record("round \(index): hkd's port accepted a connection it did not serve: \(failure)")
            }
            // Ready means served: a connection made after /readyz said so is answered.
            if round.readyz?.status == "HTTP/1.1 200 OK" {
                #expect(round.main == .answered, "round \(index): /readyz said ready, the port \(round.main)")
            }
            // Served means ready: once a connection was answered, /readyz says so from the next round on.
            if index > 0, rounds[index - 1].main == .answered {
                #expect(
                    round.readyz?.status == "HTTP/1.1 200 OK", "round \(index): \(String(describing: round.readyz))")
            }
        }
        return (hkd, rounds)
    }
}
