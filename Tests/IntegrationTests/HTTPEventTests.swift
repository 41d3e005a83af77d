import Foundation
import HealthClient
import HealthModel
import TestSupport
import Testing

/// Server-sent events against the real hkd beyond the changes of types: a statistics collection kept current
/// (`&collection`), the `end` event when hkd stops, and how streamed bodies answer `HEAD` and HTTP/1.0 clients.
@Suite("HTTP events and streamed bodies", .serialized)
struct HTTPEventTests {
    typealias Reader = HTTPStreamingTests.ResponseReader

    /// One step sample of anna, `value` steps in the minute from `start` (seconds since the epoch).
    static func steps(_ value: Double, at start: Int64) -> Sample {
        Sample(
            uuid: UUID(), subject: "anna", type: "stepCount", start: start * 1_000_000, end: (start + 60) * 1_000_000,
            value: value, unit: "count", source: SourceInfo(name: "Watch"))
    }

    /// `/collection`'s buckets for `parameters`, one JSON object each, as its NDJSON lists them.
    static func collectionLines(_ parameters: String, port: Int, token: String) throws -> [String] {
        let response = try #require(
            try HTTPAPITests.exchange(
                [
                    HTTPAPITests.get(
                        "/v1/subjects/anna/collection?\(parameters)", token: token, accept: "application/x-ndjson")
                ], port: port
            ).first)
        #expect(response.status == 200, "\(response.body)")
        return response.body.split(separator: "\n").map(String.init)
    }

    /// The objects of an event's JSON array `data`.
    static func buckets(_ data: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [[String: Any]])
    }

    /// The objects of an event's JSON array `data`, each rendered again on its own (to compare with NDJSON lines).
    static func bucketTexts(_ data: String) throws -> [String] {
        #expect(data.hasPrefix("[") && data.hasSuffix("]"), "\(data)")
        // hkq's objects hold no arrays without by-source: split between objects at "},{".
        let inner = data.dropFirst().dropLast()
        if inner.isEmpty { return [] }
        let parts = inner.components(separatedBy: "},{")
        return parts.enumerated().map { index, part in
            (index == 0 ? "" : "{") + part + (index == parts.count - 1 ? "" : "}")
        }
    }

    static func events(_ parameters: String, token: String, headers: [String] = []) -> String {
        HTTPStreamingTests.get("/v1/subjects/anna/events?\(parameters)", token: token, headers: headers)
    }

    @Test(
        "a live collection: a snapshot equal to /collection, an insert as its bucket recomputed within a bounded wait, and Last-Event-ID resuming after a restart with the buckets changed meanwhile"
    )
    func collectionEvents() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: HTTPAPITests.walk).status == 0)
        let daily = "type=stepCount&interval=1d&tz=America/New_York"
        let live = "\(daily)&collection"
        let reader = try Reader(port: port)
        try reader.send(Self.events(live, token: hkd.token))
        let head = try reader.head()
        #expect(head.status == 200 && head.headers["content-type"] == "text/event-stream")
        let snapshot = try #require(try reader.nextNamedEvent())
        #expect(snapshot.event == "snapshot")
        let before = try Self.collectionLines(daily, port: port, token: hkd.token)
        #expect(before.count == 2)
        #expect(try Self.bucketTexts(snapshot.data) == before, "\(snapshot.data)")
        let snapshotID = try #require(snapshot.id.flatMap { UInt64($0) }, "\(snapshot)")

        // 500 steps on 2026-11-30 at 08:00 New York time: that day's bucket, 2400 before, is pushed again.
        let client = hkd.client()
        let inserted = ContinuousClock.now
        _ = try await client.insert([Self.steps(500, at: 1_796_043_600)])
        let update = try #require(try reader.nextNamedEvent())
        let latency = ContinuousClock.now - inserted
        // About 50 ms on an idle machine (the insert's fsync included); the bound is for one loaded by the other
        // suites running at the same time.
        #expect(latency < .seconds(10), "\(latency)")
        print("HTTPEventTests: an insert reached the collection stream after \(latency)")
        #expect(update.event == "buckets")
        let updateID = try #require(update.id.flatMap { UInt64($0) })
        #expect(updateID > snapshotID)
        let after = try Self.collectionLines(daily, port: port, token: hkd.token)
        #expect(try Self.bucketTexts(update.data) == [after[1]], "\(update.data)")
        #expect(try Self.buckets(update.data).first?["sum"] as? Double == 2900, "\(update.data)")

        // Missed while away, across a restart: 100 steps on 2026-11-29 and 7 on a new day, 2026-12-01.
        client.close()
        await hkd.kill()
        let restarted = try await hkd.restart()
        let restartedPort = try HTTPAPITests.httpPort(of: restarted)
        let writer = restarted.client()
        _ = try await writer.insert([Self.steps(100, at: 1_795_960_800)])
        _ = try await writer.insert([Self.steps(7, at: 1_796_137_200)])
        let resumed = try Reader(port: restartedPort)
        try resumed.send(Self.events(live, token: restarted.token, headers: ["Last-Event-ID: \(updateID)"]))
        #expect(try resumed.head().status == 200)
        let missed = try #require(try resumed.nextNamedEvent())
        #expect(missed.event == "buckets", "\(missed)")
        let now = try Self.collectionLines(daily, port: restartedPort, token: restarted.token)
        #expect(now.count == 3)
        #expect(try Self.bucketTexts(missed.data) == [now[0], now[2]], "\(missed.data)")
        let missedID = try #require(missed.id.flatMap { UInt64($0) })
        // Nothing else was missed: the next event is the next insert.
        _ = try await writer.insert([Self.steps(1, at: 1_796_043_600)])
        let next = try #require(try resumed.nextNamedEvent())
        #expect(next.event == "buckets" && next.id.flatMap { UInt64($0) } ?? 0 > missedID, "\(next)")
        #expect(try Self.buckets(next.data).first?["sum"] as? Double == 2901, "\(next.data)")
        writer.close()

        // An id newer than any change this server knows starts over with a snapshot; from/through list empty
        // buckets as /collection does.
        let ranged = "\(daily)&from=2026-11-28&through=2026-12-02"
        let unknown = try Reader(port: restartedPort)
        try unknown.send(
            Self.events("\(ranged)&collection", token: restarted.token, headers: ["Last-Event-ID: 999999999999999"]))
        #expect(try unknown.head().status == 200)
        let fresh = try #require(try unknown.nextNamedEvent())
        #expect(fresh.event == "snapshot", "\(fresh)")
        let range = try Self.collectionLines(ranged, port: restartedPort, token: restarted.token)
        #expect(range.count == 5)
        #expect(try Self.bucketTexts(fresh.data) == range, "\(fresh.data)")

        // Refused: two types, a switch with a value, a bad interval, an unknown parameter, a changes-stream id.
        for (parameters, headers, words) in [
            ("type=stepCount,heartRate&collection", [String](), "one type"),
            ("\(daily)&collection=yes", [], "switch"),
            ("type=stepCount&interval=soon&collection", [], "soon"),
            ("\(daily)&collection&limit=3", [], "limit"),
            (live, ["Last-Event-ID: 3:1"], "3:1"),
        ] {
            let refused = try HTTPStreamingTests.answer(
                "/v1/subjects/anna/events?\(parameters)", port: restartedPort, token: restarted.token,
                headers: headers)
            #expect(refused.status == 400 && refused.body.contains(words), "\(parameters): \(refused)")
        }
        await restarted.stop()
    }

    @Test("SIGTERM while clients read events: each stream gets an end event and its last chunk, and hkd exits promptly")
    func drainEndsStreams() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: HTTPAPITests.walk).status == 0)
        let changes = try Reader(port: port)
        try changes.send(Self.events("type=stepCount", token: hkd.token))
        #expect(try changes.head().status == 200)
        for _ in 0..<4 { _ = try #require(try changes.nextNamedEvent()) }
        let collection = try Reader(port: port)
        try collection.send(Self.events("type=stepCount&interval=1d&tz=UTC&collection", token: hkd.token))
        #expect(try collection.head().status == 200)
        #expect(try collection.nextNamedEvent()?.event == "snapshot")

        let pid = try #require(hkd.processIdentifier)
        let signalled = ContinuousClock.now
        #expect(kill(pid, SIGTERM) == 0)
        for reader in [changes, collection] {
            let end = try #require(try reader.nextNamedEvent())
            #expect(end.event == "end" && end.id == nil, "\(end)")
            let data = try #require(try JSONSerialization.jsonObject(with: Data(end.data.utf8)) as? [String: Any])
            #expect(data["reason"] as? String == "shutdown", "\(end.data)")
            #expect(try reader.nextNamedEvent() == nil)
            #expect(reader.endedWithLastChunk, "the body ended without its last chunk")
        }
        let status = await hkd.stop()
        let took = ContinuousClock.now - signalled
        #expect(status == 0)
        // The streams end at once; the drain waits at most 2 s for other bodies.
        #expect(took < .seconds(5), "\(took)")
        print("HTTPEventTests: hkd ended two event streams and exited \(took) after SIGTERM")
    }

    @Test(
        "HEAD of a streamed listing or an event stream answers its head alone at once, without running it; an HTTP/1.0 client gets a long body unchunked, the connection closing at its end"
    )
    func headAndHTTP10() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        try await HTTPStreamingTests.insertSteps(5_000, into: hkd)
        let listing = "/v1/subjects/anna/samples?type=stepCount&tz=UTC"
        let reader = try Reader(port: port)
        try reader.send(HTTPStreamingTests.get(listing, token: hkd.token))
        let whole = try reader.head()
        #expect(whole.status == 200 && whole.headers["transfer-encoding"] == "chunked")
        let expected = try reader.body(whole.headers)
        #expect(expected.complete && expected.bytes.count > 64 * 1024)
        // A request pipelined behind a streamed body waits for it, then is answered.
        try reader.send(
            HTTPStreamingTests.get(listing, token: hkd.token) + HTTPStreamingTests.get("/v1/types", token: hkd.token))
        let again = try reader.head()
        #expect(try reader.body(again.headers).bytes == expected.bytes)
        let behind = try reader.head()
        #expect(behind.status == 200 && behind.headers["content-type"] == "application/json", "\(behind)")

        // HEAD, then GET on the same connection: the HEAD's head has no framing field and no body follows.
        for target in [listing, "/v1/subjects/anna/events?type=stepCount"] {
            let started = ContinuousClock.now
            let pipelined = try Reader(port: port)
            try pipelined.send(
                HTTPStreamingTests.get(target, token: hkd.token).replacingOccurrences(of: "GET ", with: "HEAD ")
                    + HTTPStreamingTests.get("/v1/types", token: hkd.token))
            let head = try pipelined.head()
            #expect(head.status == 200, "\(target)")
            #expect(head.headers["content-length"] == nil && head.headers["transfer-encoding"] == nil, "\(head)")
            let types = try pipelined.head()
            #expect(types.status == 200 && types.headers["content-type"] == "application/json", "\(types)")
            #expect(try pipelined.body(types.headers).bytes.count > 0)
            // An event stream's producer never ends: had HEAD run it, no answer would have come.
            #expect(ContinuousClock.now - started < .seconds(5))
        }

        // HTTP/1.0: the same bytes, no chunks, Connection: close, the end of the body where the connection ends.
        let old = try Reader(port: port)
        try old.send("GET \(listing) HTTP/1.0\r\nAuthorization: Bearer \(hkd.token)\r\n\r\n")
        let oldHead = try old.head()
        #expect(oldHead.status == 200)
        #expect(oldHead.headers["transfer-encoding"] == nil && oldHead.headers["content-length"] == nil)
        #expect(oldHead.headers["connection"] == "close")
        while try old.fill() {}
        #expect(old.buffer == expected.bytes)
        // A short body keeps its Content-Length.
        let short = try Reader(port: port)
        try short.send("GET /v1/types HTTP/1.0\r\nAuthorization: Bearer \(hkd.token)\r\n\r\n")
        let shortHead = try short.head()
        #expect(shortHead.status == 200 && shortHead.headers["content-length"] != nil)
        // Events too: unchunked, one event after another.
        let events = try Reader(port: port)
        try events.send(
            "GET /v1/subjects/anna/events?type=stepCount HTTP/1.0\r\nAuthorization: Bearer \(hkd.token)\r\n\r\n")
        let eventsHead = try events.head()
        #expect(eventsHead.status == 200 && eventsHead.headers["transfer-encoding"] == nil)
        let first = try #require(try events.nextNamedEvent(chunked: false))
        #expect(first.data.hasPrefix("{\"kind\":\"added\",\"type\":\"stepCount\""), "\(first)")
        await hkd.stop()
    }

    @Test(
        "--http-max-streams caps the reads in progress: beyond it 503 with Retry-After; a stream whose client leaves frees its place at once"
    )
    func streamCap() async throws {
        let (hkd, port) = try await HTTPAPITests.server(["--http-max-streams", "2"])
        var open: [Reader] = []
        for _ in 0..<2 {
            let reader = try Reader(port: port)
            try reader.send(Self.events("type=stepCount", token: hkd.token))
            #expect(try reader.head().status == 200)
            open.append(reader)
        }
        for target in ["/v1/subjects/anna/events?type=stepCount", "/v1/types"] {
            let reader = try Reader(port: port)
            try reader.send(HTTPStreamingTests.get(target, token: hkd.token))
            let head = try reader.head()
            #expect(head.status == 503 && head.headers["retry-after"] == "1", "\(target): \(head)")
            let body = String(decoding: try reader.body(head.headers).bytes, as: UTF8.self)
            #expect(body.contains("\"name\":\"busy\"") && body.contains("--http-max-streams"), "\(body)")
        }
        // A client leaves (all it was sent read, so it closes with a FIN, not a reset): its stream ends without
        // waiting for the next heartbeat (15 s), and a read gets through.
        _ = try? open.last!.socket.read(maxBytes: 65_536, timeout: .milliseconds(300))
        open.removeLast()
        let left = ContinuousClock.now
        try await waitUntil(timeout: .seconds(5), "a place to free up") {
            try HTTPAPITests.exchange([HTTPAPITests.get("/v1/types", token: hkd.token)], port: port).first?.status
                == 200
        }
        print("HTTPEventTests: a stream's place was free \(ContinuousClock.now - left) after its client left")
        await hkd.stop()
    }
}
