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
            try nextNamedEvent().map { ($0.id, $0.data) }
        }

        /// Whether the chunked body ended with its last chunk (after ``nextNamedEvent()`` returned nil).
        var endedWithLastChunk = false

        /// The next server-sent event of a `text/event-stream` body (comments skipped): its `event` name, `id`
        /// and `data`; nil when the stream ended. `chunked` false reads a body without chunks (HTTP/1.0).
        func nextNamedEvent(chunked: Bool = true) throws -> (event: String?, id: String?, data: String)? {
            while true {
                if let end = events.indices.dropLast().first(where: { events[$0] == 10 && events[$0 + 1] == 10 }) {
                    let block = String(decoding: events[..<end], as: UTF8.self)
                    events.removeFirst(end + 2)
                    var (event, id, data): (String?, String?, String?) = (nil, nil, nil)
                    for line in block.split(separator: "\n") {
                        if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
                        if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                        if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                    }
                    if let data { return (event, id, data) }
                    continue
                }
                guard chunked else {
                    events += buffer
                    buffer.removeAll()
                    guard try fill() else { return nil }
                    continue
                }
                guard let line = try take(until: [13, 10]),
                    let size = Int(String(decoding: line, as: UTF8.self), radix: 16)
                else { return nil }
                guard size > 0 else {
                    endedWithLastChunk = try take(until: [13, 10]) != nil
                    return nil
                }
                guard let chunk = try take(size + 2) else { return nil }
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

    /// One sample of anna at minute `minute` of 2026-12-01, named `uuid`: steps (10) or, with `heart`, a heart
    /// rate (60/min).
    static func sample(_ minute: Int, _ uuid: UUID, heart: Bool = false) -> Sample {
        let start: Timestamp = 1_796_083_200 * 1_000_000 + Timestamp(minute) * 60_000_000
        return Sample(
            uuid: uuid, subject: "anna", type: heart ? "heartRate" : "stepCount", start: start,
            end: start + 60_000_000, value: heart ? 60 : 10, unit: heart ? "count/min" : "count",
            source: SourceInfo(name: "Watch"))
    }

    /// The status and body of a GET that is answered at once (not a stream).
    static func answer(_ target: String, port: Int, token: String, headers: [String] = []) throws -> (
        status: Int, body: String
    ) {
        let reader = try ResponseReader(port: port)
        try reader.send(get(target, token: token, headers: headers))
        let head = try reader.head()
        return (head.status, String(decoding: try reader.body(head.headers).bytes, as: UTF8.self))
    }

    @Test("server-sent events of two types arrive at once; after a restart Last-Event-ID resumes each type exactly")
    func events() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: HTTPAPITests.walk).status == 0)
        var reader: ResponseReader? = try ResponseReader(port: port)
        try reader!.send(Self.get("/v1/subjects/anna/events?type=stepCount,heartRate&tz=UTC", token: hkd.token))
        let head = try reader!.head()
        #expect(head.status == 200 && head.headers["content-type"] == "text/event-stream")
        #expect(head.headers["transfer-encoding"] == "chunked" && head.headers["content-encoding"] == nil)
        // Every change so far (anchor 0 for each type), each as hkq changes --format ndjson prints it: the walk's
        // four step counts and one heart rate. Each id gives both types' positions.
        var replayed: [(id: String?, data: String)] = []
        for _ in 0..<5 { replayed.append(try #require(try reader!.nextEvent())) }
        let steps = replayed.filter { $0.data.hasPrefix("{\"kind\":\"added\",\"type\":\"stepCount\"") }
        let hearts = replayed.filter { $0.data.hasPrefix("{\"kind\":\"added\",\"type\":\"heartRate\"") }
        #expect(steps.count == 4 && hearts.count == 1, "\(replayed)")
        #expect(replayed.allSatisfy { $0.id?.split(separator: ",").count == 2 }, "\(replayed)")
        #expect(replayed.last?.id?.contains(":") == false, "\(replayed)")

        let client = hkd.client()
        var lastID: String?
        for heart in [false, true] {
            let live = UUID()
            let inserted = ContinuousClock.now
            _ = try await client.insert([Self.sample(1, live, heart: heart)])
            let event = try #require(try reader!.nextEvent())
            let latency = ContinuousClock.now - inserted
            lastID = event.id
            #expect(event.data.contains(live.uuidString), "\(event.data)")
            // HealthKit's observer promise is "soon"; hkd's is well under 100 ms on an idle machine (the bound is
            // for a loaded one).
            #expect(latency < .seconds(2), "\(latency)")
            print("HTTPStreamingTests: an insert (heart \(heart)) reached the event stream after \(latency)")
        }
        client.close()
        let resumeID = try #require(lastID)
        let positions = resumeID.split(separator: ",").map(String.init)
        #expect(positions.count == 2 && positions.allSatisfy { !$0.contains(":") }, "\(resumeID)")

        reader = nil
        await hkd.kill()
        let restarted = try await hkd.restart()
        let restartedPort = try Self.httpPort(restarted)
        let missedSteps = [UUID(), UUID()]
        let missedHearts = [UUID(), UUID()]
        let writer = restarted.client()
        _ = try await writer.insert([Self.sample(2, missedSteps[0])])
        _ = try await writer.insert([Self.sample(2, missedHearts[0], heart: true)])
        _ = try await writer.insert([Self.sample(3, missedSteps[1])])
        _ = try await writer.insert([Self.sample(3, missedHearts[1], heart: true)])
        // The same two types as repeated parameters, in the same order.
        let both = "/v1/subjects/anna/events?type=stepCount&type=heartRate&tz=UTC"
        let resumed = try ResponseReader(port: restartedPort)
        try resumed.send(Self.get(both, token: restarted.token, headers: ["Last-Event-ID: \(resumeID)"]))
        #expect(try resumed.head().status == 200)
        var missed: [String] = []
        for _ in 0..<4 { missed.append(try #require(try resumed.nextEvent()).data) }
        for uuid in missedSteps + missedHearts {
            #expect(missed.filter { $0.contains(uuid.uuidString) }.count == 1, "\(uuid): \(missed)")
        }
        // A stream of one type resumes from that type's part of the id, in the one-type form ANCHOR[:N].
        let single = try ResponseReader(port: restartedPort)
        try single.send(
            Self.get(
                "/v1/subjects/anna/events?type=heartRate&tz=UTC", token: restarted.token,
                headers: ["Last-Event-ID: \(positions[1])"]))
        #expect(try single.head().status == 200)
        for uuid in missedHearts { #expect(try #require(try single.nextEvent()).data.contains(uuid.uuidString)) }
        // Nothing else was missed: the next event of each stream is the next insert.
        let marker = UUID()
        _ = try await writer.insert([Self.sample(4, marker, heart: true)])
        #expect(try #require(try resumed.nextEvent()).data.contains(marker.uuidString))
        #expect(try #require(try single.nextEvent()).data.contains(marker.uuidString))
        writer.close()

        // Too many types, a type twice, and an id without a position for each type are refused.
        let seventeen = Array(repeating: "stepCount", count: 17).joined(separator: ",")
        let tooMany = try Self.answer(
            "/v1/subjects/anna/events?type=\(seventeen)", port: restartedPort, token: restarted.token)
        #expect(tooMany.status == 400 && tooMany.body.contains("at most 16"), "\(tooMany)")
        let twice = try Self.answer(
            "/v1/subjects/anna/events?type=stepCount,heartRate&type=stepCount", port: restartedPort,
            token: restarted.token)
        #expect(twice.status == 400 && twice.body.contains("twice"), "\(twice)")
        let short = try Self.answer(
            both, port: restartedPort, token: restarted.token, headers: ["Last-Event-ID: \(positions[0])"])
        #expect(short.status == 400, "\(short)")
        await restarted.stop()
    }
}
