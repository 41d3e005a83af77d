import Foundation
import HealthClient
import HealthModel
import HealthPosix
import TestSupport
import Testing

/// `--metrics-listen`: the Prometheus page, health and readiness, against the real hkd and the real promtool.
@Suite("metrics and health endpoint", .serialized)
struct MetricsTests {
    /// One HTTP exchange: the status line and the body.
    static func get(_ path: String, port: Int, method: String = "GET") throws -> (status: String, body: String) {
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        defer { socket.close() }
        try socket.write(Array("\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        var bytes: [UInt8] = []
        while true {
            let chunk = try socket.read(maxBytes: 65_536, timeout: .seconds(10))
            if chunk.isEmpty { break }
            bytes += chunk
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let status = parts[0].components(separatedBy: "\r\n")[0]
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
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
        let log = hkd.logText
        let marker = try #require(log.range(of: "metrics on 127.0.0.1:"))
        let port = try #require(Int(log[marker.upperBound...].prefix { $0.isNumber }))
        let client = hkd.client()
        defer { client.close() }

        let before = try Self.get("/metrics", port: port)
        #expect(before.status == "HTTP/1.1 200 OK")
        _ = try await client.insert(try EndToEndTests.steps(subject: "anna", minutes: 25))
        _ = try await client.insert(try EndToEndTests.steps(subject: "ben", minutes: 5))
        _ = try? await client.statistics("noSuchType", subject: "anna", options: .cumulativeSum)
        let after = try Self.get("/metrics", port: port).body
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

        #expect(try Self.get("/healthz", port: port) == ("HTTP/1.1 200 OK", "ok\n"))
        #expect(try Self.get("/readyz", port: port) == ("HTTP/1.1 200 OK", "ready\n"))
        #expect(try Self.get("/nope", port: port).status == "HTTP/1.1 404 Not Found")
        #expect(try Self.get("/metrics", port: port, method: "POST").status == "HTTP/1.1 405 Method Not Allowed")
        #expect(try Self.get("/" + String(repeating: "x", count: 9000), port: port).status.hasPrefix("HTTP/1.1 431"))
        await hkd.stop()
    }
}
