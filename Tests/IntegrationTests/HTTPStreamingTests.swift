import Foundation
import HealthClient
import HealthCodec
import HealthModel
import HealthPosix
import TestSupport
import Testing

/// Streamed HTTP responses against the real hkd: large listings go out chunked with bounded memory, byte for
/// byte what hkq prints; a slow client holds the producer back; a client that leaves stops it.
@Suite("HTTP streaming", .serialized)
struct HTTPStreamingTests {
    /// Reads HTTP/1.1 responses from a socket as they arrive: the head, then the body by `Content-Length` or
    /// chunked (decoded), or lines of it (events).
    final class ResponseReader {
        let socket: ClientSocket
        var buffer: [UInt8] = []

        init(port: Int) throws {
            socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        }

        deinit { socket.close() }

        func send(_ request: String) throws { try socket.write(Array(request.utf8)) }

        /// Reads more bytes into the buffer; false at end of stream.
        func fill() throws -> Bool {
            let chunk = try socket.read(maxBytes: 256 * 1024, timeout: .seconds(60))
            buffer += chunk
            return !chunk.isEmpty
        }

        /// The bytes up to and without `delimiter`, consumed with it; nil at end of stream.
        func take(until delimiter: [UInt8]) throws -> [UInt8]? {
            var from = 0
            while true {
                if buffer.count >= delimiter.count {
                    for index in from...(buffer.count - delimiter.count)
                    where buffer[index..<index + delimiter.count].elementsEqual(delimiter) {
                        let taken = Array(buffer[..<index])
                        buffer.removeFirst(index + delimiter.count)
                        return taken
                    }
                    from = buffer.count - delimiter.count + 1
                }
                guard try fill() else { return nil }
            }
        }

        /// `count` bytes, consumed; nil when the stream ends first.
        func take(_ count: Int) throws -> [UInt8]? {
            while buffer.count < count { guard try fill() else { return nil } }
            let taken = Array(buffer[..<count])
            buffer.removeFirst(count)
            return taken
        }

        /// Decoded bytes of a chunked event stream not yet parsed into events.
        var events: [UInt8] = []

        /// The next server-sent event of a chunked `text/event-stream` body (comments skipped): its `id` and
        /// `data`; nil when the stream ended.
        func nextEvent() throws -> (id: String?, data: String)? {
            while true {
                if let end = events.indices.dropLast().first(where: { events[$0] == 10 && events[$0 + 1] == 10 }) {
                    let block = String(decoding: events[..<end], as: UTF8.self)
                    events.removeFirst(end + 2)
                    var id: String?
                    var data: String?
                    for line in block.split(separator: "\n") {
                        if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                        if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                    }
                    if let data { return (id, data) }
                    continue
                }
                guard let line = try take(until: [13, 10]),
                    let size = Int(String(decoding: line, as: UTF8.self), radix: 16), size > 0,
                    let chunk = try take(size + 2)
                else { return nil }
                events += chunk.dropLast(2)
            }
        }

        /// The status and header fields (names in lower case).
        func head() throws -> (status: Int, headers: [String: String]) {
            let text = String(decoding: try #require(try take(until: Array("\r\n\r\n".utf8))), as: UTF8.self)
            let lines = text.components(separatedBy: "\r\n")
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
            }
            return (try #require(Int(lines[0].split(separator: " ")[1])), headers)
        }

        /// The body after `headers`; `complete` is false when a chunked body ended without its last chunk.
        func body(_ headers: [String: String]) throws -> (bytes: [UInt8], complete: Bool) {
            if let length = headers["content-length"].flatMap(Int.init) {
                return (try #require(try take(length)), true)
            }
            var body: [UInt8] = []
            while let line = try take(until: [13, 10]) {
                guard let size = Int(String(decoding: line, as: UTF8.self), radix: 16) else { return (body, false) }
                if size == 0 { return (body, try take(until: [13, 10]) != nil) }
                guard let chunk = try take(size + 2) else { return (body, false) }
                body += chunk.dropLast(2)
            }
            return (body, false)
        }
    }

    /// A field of `/proc/PID/status` in kilobytes (`VmRSS`, `VmHWM`).
    static func memory(_ field: String, of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
    }

    /// The states (`R`, `S` …) of hkd's threads named `name`.
    static func threadStates(_ name: String, of pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
            guard comm?.trimmingCharacters(in: .newlines) == name,
                let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            return stat[stat.index(close, offsetBy: 2)...].split(separator: " ").first.map(String.init)
        }
    }

    /// `count` step samples of anna a minute apart, inserted in batches.
    static func insertSteps(_ count: Int, into hkd: TestServer) async throws {
        let client = hkd.client()
        defer { client.close() }
        let base: Timestamp = 1_780_000_000 * 1_000_000
        var random = SplitMix64(seed: TestSeed.value(34))
        for first in stride(from: 0, to: count, by: 50_000) {
            let samples = (first..<min(count, first + 50_000)).map { index in
                Sample(
                    uuid: UUID(uuid: Self.uuid(&random)), subject: "anna", type: "stepCount",
                    start: base + Timestamp(index) * 60_000_000, end: base + Timestamp(index + 1) * 60_000_000,
                    value: Double(index % 97), unit: "count", source: SourceInfo(name: "iPhone"))
            }
            _ = try await client.insert(samples)
        }
    }

    static func uuid(_ random: inout SplitMix64) -> uuid_t {
        let (a, b) = (random.next(), random.next())
        return withUnsafeBytes(of: (a, b)) { bytes in
            bytes.load(as: uuid_t.self)
        }
    }

    static func get(_ target: String, token: String, headers: [String] = []) -> String {
        "GET \(target) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\n"
            + headers.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    @Test("a large listing streams chunked with bounded server memory, byte for byte hkq's output")
    func largeListing() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        let rows = 200_000
        try await Self.insertSteps(rows, into: hkd)
        let pid = try #require(hkd.processIdentifier)
        let target = "/v1/subjects/anna/samples?type=stepCount&tz=UTC"
        // A small listing first, so that what any listing allocates once is in the baseline.
        let warm = try ResponseReader(port: port)
        try warm.send(Self.get(target + "&limit=3", token: hkd.token))
        let warmHead = try warm.head()
        #expect(warmHead.status == 200 && warmHead.headers["content-length"] != nil)
        _ = try warm.body(warmHead.headers)
        let baseline = try Self.memory("VmRSS", of: pid)
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)

        let reader = try ResponseReader(port: port)
        try reader.send(Self.get(target, token: hkd.token))
        let head = try reader.head()
        #expect(head.status == 200)
        #expect(head.headers["transfer-encoding"] == "chunked" && head.headers["content-length"] == nil)
        // The client reads nothing more until the producer waits for it: the connection's cap holds it back.
        try await waitUntil("the body's producer to wait for the client") {
            Self.threadStates("hkd-http-body", of: pid) == ["S"]
        }
        let waitingPeak = try Self.memory("VmHWM", of: pid)
        let started = ContinuousClock.now
        let (body, complete) = try reader.body(head.headers)
        print("HTTPStreamingTests: streamed in \(ContinuousClock.now - started)")
        let peak = try Self.memory("VmHWM", of: pid)
        #expect(complete)
        let expected = try await HKQBinaryTests.hkq(
            HKQBinaryTests.anna(at: hkd) + ["--format", "json", "samples", "stepCount", "--tz", "UTC"])
        #expect(expected.status == 0)
        #expect(body.count == expected.out.utf8.count)
        #expect(body.elementsEqual(expected.out.utf8), "the streamed body differs from hkq's output")
        // The body is tens of megabytes; the server held a page of samples and a few chunks at a time.
        let boundKB = 14 * 1024
        #expect(body.count > 2 * 1024 * boundKB, "\(body.count) bytes")
        #expect(peak - baseline < boundKB, "peak \(peak) kB, baseline \(baseline) kB, waiting \(waitingPeak) kB")
        print("HTTPStreamingTests: body \(body.count) B, baseline \(baseline) kB, peak \(peak) kB")
        await hkd.stop()
    }

    @Test("a client that leaves mid-stream stops the producer; the server serves on")
    func clientLeaves() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        try await Self.insertSteps(150_000, into: hkd)
        let pid = try #require(hkd.processIdentifier)
        let reader = try ResponseReader(port: port)
        try reader.send(Self.get("/v1/subjects/anna/samples?type=stepCount", token: hkd.token))
        #expect(try reader.head().status == 200)
        try await waitUntil("the body's producer to wait for the client") {
            Self.threadStates("hkd-http-body", of: pid) == ["S"]
        }
        reader.socket.close()
        try await waitUntil("the producer to stop") { Self.threadStates("hkd-http-body", of: pid).isEmpty }
        let again = try ResponseReader(port: port)
        try again.send(Self.get("/v1/subjects/anna/samples?type=stepCount&limit=2", token: hkd.token))
        let head = try again.head()
        #expect(head.status == 200)
        #expect(try again.body(head.headers).bytes.count > 100)
        await hkd.stop()
    }

    @Test("Accept: application/x-ndjson gives hkq's --format ndjson: one object a line, the JSON array's elements")
    func ndjson() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: HTTPAPITests.walk).status == 0)
        for (target, command) in [
            ("/v1/subjects/anna/samples?type=stepCount&tz=UTC", ["samples", "stepCount", "--tz", "UTC"]),
            (
                "/v1/subjects/anna/collection?type=stepCount&interval=1d&tz=UTC",
                ["collection", "stepCount", "--tz", "UTC"]
            ),
            ("/v1/subjects/anna/changes?type=stepCount&limit=3", ["changes", "stepCount", "--limit", "3"]),
        ] {
            let reader = try ResponseReader(port: port)
            try reader.send(Self.get(target, token: hkd.token, headers: ["Accept: application/x-ndjson"]))
            let head = try reader.head()
            #expect(head.status == 200 && head.headers["content-type"] == "application/x-ndjson")
            let body = String(decoding: try reader.body(head.headers).bytes, as: UTF8.self)
            let expected = try await HKQBinaryTests.hkq(anna + ["--format", "ndjson"] + command)
            #expect(expected.status == 0 && body == expected.out, "\(target)")
            let lines = body.split(separator: "\n")
            #expect(lines.count >= 2 && lines.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") }, "\(body)")
            if command[0] != "changes" {
                // The elements of the JSON array, in order.
                let json = try await HKQBinaryTests.hkq(anna + ["--format", "json"] + command)
                let elements = json.out.split(separator: "\n").dropFirst().dropLast().map {
                    $0.dropFirst(2).hasSuffix(",") ? String($0.dropFirst(2).dropLast()) : String($0.dropFirst(2))
                }
                #expect(lines.map(String.init) == elements)
            }
        }
        let refused = try ResponseReader(port: port)
        try refused.send(Self.get("/v1/types", token: hkd.token, headers: ["Accept: application/x-ndjson"]))
        #expect(try refused.head().status == 400)
        await hkd.stop()
    }

    @Test("Accept-Encoding: gzip compresses small and streamed bodies alike; q=0 refuses it")
    func gzip() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        try await Self.insertSteps(3_000, into: hkd)
        for target in ["/v1/subjects/anna/samples?type=stepCount&limit=5", "/v1/subjects/anna/samples?type=stepCount"] {
            let plain = try ResponseReader(port: port)
            try plain.send(Self.get(target, token: hkd.token, headers: ["Accept-Encoding: gzip;q=0, br"]))
            let plainHead = try plain.head()
            #expect(plainHead.headers["content-encoding"] == nil)
            #expect(plainHead.headers["vary"] == "Accept-Encoding")
            let expected = try plain.body(plainHead.headers).bytes

            let reader = try ResponseReader(port: port)
            try reader.send(Self.get(target, token: hkd.token, headers: ["Accept-Encoding: br, gzip;q=0.8"]))
            let head = try reader.head()
            #expect(head.status == 200)
            #expect(head.headers["content-encoding"] == "gzip" && head.headers["vary"] == "Accept-Encoding")
            let (compressed, complete) = try reader.body(head.headers)
            #expect(complete)
            #expect(try Zlib.inflate(compressed, maxOutput: 1 << 30, format: .gzip) == expected)
            #expect(
                expected.count < 65_536 || compressed.count < expected.count / 3,
                "\(compressed.count) of \(expected.count) bytes")
        }
        await hkd.stop()
    }

    /// The HTTP API's port, from hkd's log.
    static func httpPort(_ hkd: TestServer) throws -> Int {
        let log = hkd.logText
        let marker = try #require(log.range(of: "HTTP API on 127.0.0.1:", options: .backwards))
        return try #require(Int(log[marker.upperBound...].prefix { $0.isNumber }))
    }

    /// One step sample of anna at minute `minute` of 2026-12-01, named `uuid`.
    static func step(_ minute: Int, _ uuid: UUID) -> Sample {
        let start: Timestamp = 1_796_083_200 * 1_000_000 + Timestamp(minute) * 60_000_000
        return Sample(
            uuid: uuid, subject: "anna", type: "stepCount", start: start, end: start + 60_000_000, value: 10,
            unit: "count", source: SourceInfo(name: "Watch"))
    }

    @Test(
        "server-sent events: an insert arrives at once; after a restart Last-Event-ID resumes with the missed changes")
    func events() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: HTTPAPITests.walk).status == 0)
        let target = "/v1/subjects/anna/events?type=stepCount&tz=UTC"
        var reader: ResponseReader? = try ResponseReader(port: port)
        try reader!.send(Self.get(target, token: hkd.token))
        let head = try reader!.head()
        #expect(head.status == 200 && head.headers["content-type"] == "text/event-stream")
        #expect(head.headers["transfer-encoding"] == "chunked" && head.headers["content-encoding"] == nil)
        // Every change so far (anchor 0), each as hkq changes --format ndjson prints it.
        var replayed: [(id: String?, data: String)] = []
        for _ in 0..<4 { replayed.append(try #require(try reader!.nextEvent())) }
        #expect(replayed.allSatisfy { $0.data.hasPrefix("{\"kind\":\"added\",\"type\":\"stepCount\"") })
        #expect(replayed.dropLast().allSatisfy { $0.id?.contains(":") == true })
        #expect(replayed.last?.id.flatMap { UInt64($0) } != nil)

        let client = hkd.client()
        let live = UUID()
        let inserted = ContinuousClock.now
        _ = try await client.insert([Self.step(1, live)])
        let event = try #require(try reader!.nextEvent())
        let latency = ContinuousClock.now - inserted
        client.close()
        #expect(event.data.contains(live.uuidString), "\(event.data)")
        // HealthKit's observer promise is "soon"; hkd's is well under 100 ms on an idle machine (the bound is for a
        // loaded one).
        #expect(latency < .seconds(2), "\(latency)")
        print("HTTPStreamingTests: an insert reached the event stream after \(latency)")
        let lastID = try #require(event.id)

        reader = nil
        await hkd.kill()
        let restarted = try await hkd.restart()
        let missed = [UUID(), UUID()]
        let writer = restarted.client()
        _ = try await writer.insert([Self.step(2, missed[0])])
        _ = try await writer.insert([Self.step(3, missed[1])])
        let resumed = try ResponseReader(port: try Self.httpPort(restarted))
        try resumed.send(Self.get(target, token: restarted.token, headers: ["Last-Event-ID: \(lastID)"]))
        #expect(try resumed.head().status == 200)
        let first = try #require(try resumed.nextEvent())
        let second = try #require(try resumed.nextEvent())
        #expect(first.data.contains(missed[0].uuidString) && second.data.contains(missed[1].uuidString))
        // Nothing else was missed: the next event is the next insert.
        let marker = UUID()
        _ = try await writer.insert([Self.step(4, marker)])
        #expect(try #require(try resumed.nextEvent()).data.contains(marker.uuidString))
        writer.close()
        await restarted.stop()
    }
}
