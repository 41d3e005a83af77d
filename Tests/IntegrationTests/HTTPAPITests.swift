import Foundation
import HealthPosix
import TestSupport
import Testing

/// hkd's HTTP/JSON API (`--http-listen`) against the real hkd: hkq's JSON and CSV byte for byte, tokens and
/// grants as over the binary protocol, problem documents for errors, kept-alive and pipelined connections.
@Suite("HTTP/JSON API", .serialized)
struct HTTPAPITests {
    /// A response as the test reads it.
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    static let walk = """
        type,start,end,value,unit,source
        stepCount,2026-11-29T06:00:00-05:00,2026-11-29T06:10:00-05:00,1200,count,iPhone
        stepCount,2026-11-29T06:10:00-05:00,2026-11-29T06:20:00-05:00,950,count,iPhone
        stepCount,2026-11-29T06:05:00-05:00,2026-11-29T06:15:00-05:00,1100,count,Apple Watch
        stepCount,2026-11-30T07:00:00-05:00,2026-11-30T07:30:00-05:00,2400,count,Apple Watch
        heartRate,2026-11-29T06:00:00-05:00,2026-11-29T06:00:00-05:00,72,count/min,Apple Watch
        """

    /// hkd with the HTTP API on a free port (and `arguments`), and that port.
    static func server(_ arguments: [String] = []) async throws -> (TestServer, Int) {
        let hkd = try await TestServer(arguments: ["--http-listen", "127.0.0.1:0"] + arguments)
        return (hkd, try httpPort(of: hkd))
    }

    /// The HTTP API's port, as `hkd` logged it.
    static func httpPort(of hkd: TestServer) throws -> Int {
        let log = hkd.logText
        let marker = try #require(log.range(of: "HTTP API on 127.0.0.1:"))
        return try #require(Int(log[marker.upperBound...].prefix { $0.isNumber }))
    }

    /// Sends `requests` (whole request texts) on one connection, pipelined, and reads one response each.
    static func exchange(_ requests: [String], port: Int) throws -> [Response] {
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        defer { socket.close() }
        try socket.write(Array(requests.joined().utf8))
        var buffer: [UInt8] = []
        var responses: [Response] = []
        while responses.count < requests.count {
            if let (response, used) = parse(buffer) {
                responses.append(response)
                buffer.removeFirst(used)
                continue
            }
            let chunk = try socket.read(maxBytes: 65_536, timeout: .seconds(30))
            if chunk.isEmpty { break }
            buffer += chunk
        }
        return responses
    }

    /// The first whole response in `bytes` (by its Content-Length) and its length.
    static func parse(_ bytes: [UInt8]) -> (Response, Int)? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<headEnd.lowerBound].components(separatedBy: "\r\n")
        guard let status = Int(lines[0].split(separator: " ")[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let headBytes = text[..<headEnd.upperBound].utf8.count
        guard bytes.count >= headBytes + length else { return nil }
        let body = String(decoding: bytes[headBytes..<headBytes + length], as: UTF8.self)
        return (Response(status: status, headers: headers, body: body), headBytes + length)
    }

    static func get(_ target: String, token: String?, accept: String? = nil) -> String {
        var request = "GET \(target) HTTP/1.1\r\nHost: localhost\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        if let accept { request += "Accept: \(accept)\r\n" }
        return request + "\r\n"
    }

    /// A request text with `headers` (whole lines, without CRLF) and `body`, sized by Content-Length.
    static func request(
        _ method: String, _ target: String, token: String?, headers: [String] = [], body: String = ""
    ) -> String {
        var request = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        for header in headers { request += header + "\r\n" }
        return request + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    @Test("each resource answers with the JSON (and CSV) hkq prints for the same query, byte for byte")
    func sameAsHKQ() async throws {
        let (hkd, port) = try await Self.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: Self.walk).status == 0)
        let cases: [(target: String, hkq: [String], accept: String?)] = [
            (
                "/v1/subjects/anna/statistics?type=stepCount&tz=America/New_York&options=sum,by-source",
                ["stats", "stepCount", "--tz", "America/New_York", "--options", "sum,by-source"], nil
            ),
            (
                "/v1/subjects/anna/collection?type=stepCount&interval=1d&tz=America%2FNew_York",
                ["collection", "stepCount", "--interval", "1d", "--tz", "America/New_York"], nil
            ),
            (
                "/v1/subjects/anna/samples?type=stepCount,heartRate&tz=America/New_York",
                ["samples", "stepCount,heartRate", "--tz", "America/New_York"], nil
            ),
            (
                "/v1/subjects/anna/samples?type=heartRate&tz=Europe/Paris",
                ["samples", "heartRate", "--tz", "Europe/Paris"], "text/csv"
            ),
            ("/v1/types", ["types"], nil),
            ("/v1/units/convert?value=-40&from=degC&to=degF", ["units", "convert", "--", "-40", "degC", "degF"], nil),
            ("/v1/auth/status?type=stepCount&type=workout", ["auth", "status", "stepCount", "workout"], nil),
            ("/v1/subjects/anna/changes?type=stepCount&limit=2", ["changes", "stepCount", "--limit", "2"], nil),
            ("/v1/subjects/anna/sources?type=stepCount", ["sources", "stepCount"], nil),
            ("/v1/subjects/anna/sleep?tz=Europe/Paris", ["sleep", "--tz", "Europe/Paris"], nil),
            ("/v1/subjects/anna/activity?tz=Europe/Paris", ["activity", "--tz", "Europe/Paris"], nil),
        ]
        for (target, command, accept) in cases {
            let format = accept == "text/csv" ? "csv" : "json"
            let expected = try await HKQBinaryTests.hkq(anna + ["--format", format] + command)
            #expect(expected.status == 0, "\(expected.err)")
            let response = try #require(
                try Self.exchange([Self.get(target, token: hkd.token, accept: accept)], port: port).first)
            #expect(response.status == 200, "\(target): \(response.body)")
            #expect(response.body == expected.out, "\(target)")
            #expect(
                response.headers["content-type"]?.hasPrefix(format == "csv" ? "text/csv" : "application/json") == true)
        }
        await hkd.stop()
    }

    @Test("samples cut by a limit link their next page (RFC 8288 rel=next with after=TOKEN), to the last page")
    func nextPageLinks() async throws {
        let (hkd, port) = try await Self.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: Self.walk).status == 0)
        // The first page as hkq prints it: the same JSON, and its hint names the token the link carries.
        let first = "/v1/subjects/anna/samples?type=stepCount&limit=2&tz=UTC&sort=-start"
        let hkq = try await HKQBinaryTests.hkq(
            anna + ["--format", "json", "samples", "stepCount", "--limit", "2", "--tz", "UTC", "--sort", "-start"])
        let hint = try #require(hkq.err.split(separator: "\n").last { $0.hasPrefix("hint: ") })
        let token = try #require(hint.split(separator: " ").last)
        var target = first
        var bodies: [String] = []
        var links: [String] = []
        while bodies.count < 5 {
            let response = try #require(try Self.exchange([Self.get(target, token: hkd.token)], port: port).first)
            #expect(response.status == 200, "\(target): \(response.body)")
            bodies.append(response.body)
            guard let link = response.headers["link"] else { break }
            links.append(link)
            // `<TARGET>; rel="next"`, TARGET this request's own with one after parameter, the token's.
            #expect(link.hasSuffix(">; rel=\"next\""), "\(link)")
            let next = String(link.dropFirst().prefix { $0 != ">" })
            #expect(next.hasPrefix("/v1/subjects/anna/samples?type=stepCount&limit=2&tz=UTC&sort=-start&after="))
            #expect(next.components(separatedBy: "after=").count == 2, "\(next)")
            target = next
        }
        #expect(bodies.first == hkq.out, "the first page is hkq's output, byte for byte")
        #expect(links.first?.contains("after=\(token)>") == true, "\(links)")
        // Four stepCount samples, two a page, newest first: two pages, the second without a link.
        #expect(bodies.count == 2 && links.count == 1, "\(bodies) \(links)")
        let starts = try bodies.flatMap { body in
            try #require(
                try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]]
            ).compactMap { $0["start"] as? String }
        }
        #expect(
            starts == [
                "2026-11-30T12:00:00Z", "2026-11-29T11:10:00Z", "2026-11-29T11:05:00Z", "2026-11-29T11:00:00Z",
            ])
        // A token that is not one, or one of another sort, is a 400 problem.
        let refusals = try Self.exchange(
            [
                Self.get("/v1/subjects/anna/samples?type=stepCount&after=%2A%2A", token: hkd.token),
                Self.get("/v1/subjects/anna/samples?type=stepCount&after=\(token)", token: hkd.token),
            ], port: port)
        #expect(refusals.map(\.status) == [400, 400], "\(refusals.map(\.body))")
        #expect(refusals.last?.body.contains("sorted by -start") == true, "\(refusals.map(\.body))")
        await hkd.stop()
    }

    @Test("tokens and grants as over the binary protocol: 401 without or with a bad token, own samples without read")
    func authorization() async throws {
        let (hkd, port) = try await Self.server()
        let admin = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(admin + ["insert", "-"], input: Self.walk).status == 0)
        let created = try await HKQBinaryTests.hkq(
            admin + ["admin", "create", "watch", "--subjects", "anna", "--share", "stepCount"])
        let token = try #require(created.out.split(separator: "\n").first { $0.hasPrefix("hkd1_") }.map(String.init))
        let own = """
            type,start,end,value,unit,source
            stepCount,2026-11-29T08:00:00-05:00,2026-11-29T08:10:00-05:00,77,count,Watch Sync
            """
        let writer = ["--server", "127.0.0.1:\(hkd.port)", "--token", token, "--subject", "anna"]
        #expect(try await HKQBinaryTests.hkq(writer + ["insert", "-"], input: own).status == 0)

        let target = "/v1/subjects/anna/samples?type=stepCount&tz=America/New_York"
        let responses = try Self.exchange(
            [
                Self.get(target, token: nil),
                Self.get(target, token: "hkd1_00000001_" + String(repeating: "0", count: 64)),
                Self.get(target, token: token), Self.get("/v1/subjects/ben/samples?type=stepCount", token: token),
            ], port: port)
        #expect(responses.map(\.status) == [401, 401, 200, 403])
        #expect(responses[0].headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        #expect(responses[0].headers["content-type"] == "application/problem+json")
        #expect(responses[1].body.contains("\"code\":300"))
        // Without the read grant the identity sees only the sample it wrote, as hkq with its token does.
        let expected = try await HKQBinaryTests.hkq(
            writer + ["--format", "json", "samples", "stepCount", "--tz", "America/New_York"])
        #expect(responses[2].body == expected.out)
        #expect(responses[2].body.contains("Watch Sync") && !responses[2].body.contains("iPhone"))
        #expect(responses[3].body.contains("\"code\":301") && responses[3].body.contains("\"retryable\":false"))
        // Bad tokens are answered later and later (the handshake's throttle: 100, 200, 400 ms after the 200 above).
        let wrong = "hkd1_00000009_" + String(repeating: "1", count: 64)
        let started = ContinuousClock.now
        let refused = try Self.exchange(Array(repeating: Self.get(target, token: wrong), count: 3), port: port)
        #expect(refused.map(\.status) == [401, 401, 401])
        #expect(ContinuousClock.now - started >= .milliseconds(700), "the three refusals came too soon")
        await hkd.stop()
    }

    @Test("POST samples stores a CSV or JSON-lines body as hkq insert does, once however often it is sent")
    func insert() async throws {
        let (hkd, port) = try await Self.server()
        func post(_ body: String, type: String) -> String {
            "POST /v1/subjects/anna/samples HTTP/1.1\r\nAuthorization: Bearer \(hkd.token)\r\nContent-Type: \(type)\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }
        let jsonl = """
            {"type":"stepCount","start":"2026-11-30T08:00:00Z","end":"2026-11-30T08:10:00Z","value":10,"unit":"count","source":"Agent"}

            """
        let bad = Self.walk + "\nstepCount,2026-11-29T09:00:00-05:00,2026-11-29T08:00:00-05:00,5,count,iPhone\n"
        let responses = try Self.exchange(
            [
                post(Self.walk, type: "text/csv"), post(Self.walk, type: "text/csv"),
                post(jsonl, type: "application/x-ndjson"), post(bad, type: "text/csv"),
            ], port: port)
        #expect(responses.map(\.status) == [200, 200, 200, 422], "\(responses.map(\.body))")
        // Insert's JSON: rows, inserted and already stored per type; the second time all were stored already.
        #expect(responses[0].body.contains("\"inserted\":4"), "\(responses[0].body)")
        #expect(responses[1].body.contains("\"inserted\":0"), "\(responses[1].body)")
        #expect(responses[2].body.contains("\"inserted\":1"), "\(responses[2].body)")
        #expect(responses[3].body.contains("line 7: start"), "\(responses[3].body)")
        let samples = try await HKQBinaryTests.hkq(
            HKQBinaryTests.anna(at: hkd) + ["--format", "csv", "samples", "stepCount"])
        #expect(samples.out.split(separator: "\n").count == 1 + 5)
        await hkd.stop()
    }

    @Test("errors are problem documents with hkd's code; unknown paths 404, other methods 405, bad requests close")
    func errors() async throws {
        let (hkd, port) = try await Self.server()
        let responses = try Self.exchange(
            [
                Self.get("/v1/subjects/anna/statistics?type=stepz", token: hkd.token),
                Self.get("/v1/subjects/nobody/statistics?type=stepCount", token: hkd.token),
                Self.get("/v1/subjects/anna/samples", token: hkd.token),
                Self.get("/v1/subjects/anna/samples?type=stepCount&server=elsewhere:1", token: hkd.token),
                Self.get("/v2/nothing", token: hkd.token),
                Self.get("/v1/subjects/anna/sources?type=stepCount&priority=iPhone", token: hkd.token),
                "DELETE /v1/types HTTP/1.1\r\nAuthorization: Bearer \(hkd.token)\r\n\r\n",
            ], port: port)
        #expect(responses.map(\.status) == [400, 404, 400, 400, 404, 400, 405])
        #expect(
            responses[0].body.contains("\"code\":200") && responses[0].body.contains("\"name\":\"unknownQuantityType\"")
        )
        #expect(responses[1].body.contains("\"code\":206"))
        #expect(responses[2].body.contains("type parameter is required"))
        #expect(responses[3].body.contains("server"))
        #expect(responses[5].body.contains("priority"))
        #expect(responses[6].headers["allow"] == "GET, HEAD")
        let post = try Self.exchange(
            ["PUT /v1/subjects/anna/samples HTTP/1.1\r\nContent-Length: 0\r\n\r\n"], port: port)
        #expect(post.first?.headers["allow"] == "GET, HEAD, POST, DELETE")
        // A body hkq cannot read on is the request's fault (schemathesis found this one answered 500).
        let unreadable = try Self.exchange(
            [
                Self.request(
                    "POST", "/v1/subjects/anna/samples", token: hkd.token, headers: ["Content-Type: text/csv"],
                    body: "óg"),
                Self.request("POST", "/v1/subjects/anna/samples", token: hkd.token),
            ], port: port)
        #expect(unreadable.map(\.status) == [400, 400])
        #expect(unreadable.last?.body.contains("the body is empty") == true)
        #expect(unreadable.first?.body.contains("unknown column") == true, "\(unreadable.first?.body ?? "")")
        // Headers over the cap get 431 and the connection closes.
        let huge = "GET /v1/types HTTP/1.1\r\nX-Filler: \(String(repeating: "a", count: 20_000))\r\n\r\n"
        let refused = try Self.exchange([huge], port: port)
        #expect(refused.first?.status == 431)
        await hkd.stop()
    }

    @Test("DELETE samples, PUT sources and PUT characteristics change data as hkq does, with the same grants")
    func writes() async throws {
        let (hkd, port) = try await Self.server()
        let admin = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(admin + ["insert", "-"], input: Self.walk).status == 0)
        let token = hkd.token
        let responses = try Self.exchange(
            [
                Self.request(
                    "PUT", "/v1/subjects/anna/sources?type=stepCount&priority=Apple%20Watch,iPhone", token: token),
                Self.request("PUT", "/v1/subjects/anna/sources?type=stepCount", token: token),
                Self.request(
                    "PUT", "/v1/subjects/anna/characteristics?biologicalSex=female&dateOfBirth=1984-05-01",
                    token: token),
                Self.request("PUT", "/v1/subjects/anna/characteristics?bloodType=purple", token: token),
                Self.request("DELETE", "/v1/subjects/anna/samples?type=stepCount", token: token),
                Self.request(
                    "DELETE", "/v1/subjects/anna/samples?type=stepCount&source=iPhone&tz=America/New_York",
                    token: token, headers: ["Accept: text/csv"]),
                Self.request("DELETE", "/v1/subjects/anna/samples?type=stepCount&source=iPhone", token: token),
            ], port: port)
        #expect(responses.map(\.status) == [200, 400, 200, 400, 400, 200, 200], "\(responses.map(\.body))")
        // The answers are hkq's for the same change: the order set, the characteristics after, the count deleted.
        let sources = try await HKQBinaryTests.hkq(admin + ["--format", "json", "sources", "stepCount"])
        #expect(responses[0].body == sources.out)
        #expect(sources.out.range(of: "Apple Watch")!.lowerBound < sources.out.range(of: "iPhone")!.lowerBound)
        #expect(responses[1].body.contains("the priority parameter is required"))
        let characteristics = try await HKQBinaryTests.hkq(admin + ["--format", "json", "characteristics"])
        #expect(responses[2].body == characteristics.out)
        #expect(characteristics.out.contains("\"female\"") && characteristics.out.contains("1984-05-01"))
        #expect(responses[3].body.contains("bloodType"), "\(responses[3].body)")
        #expect(responses[4].body.contains("--all"), "deleting a whole type needs all: \(responses[4].body)")
        #expect(responses[5].body == "{\"deleted\":2}\n")
        #expect(responses[5].headers["content-type"] == "application/json")
        #expect(responses[6].body == "{\"deleted\":0}\n")
        let left = try await HKQBinaryTests.hkq(admin + ["--format", "csv", "samples", "stepCount"])
        #expect(left.out.split(separator: "\n").count == 1 + 2 && !left.out.contains("iPhone"), "\(left.out)")

        // A token that may share stepCount alone: its writes of other types are refused as over the binary protocol.
        let created = try await HKQBinaryTests.hkq(
            admin + ["admin", "create", "watch", "--subjects", "anna", "--share", "stepCount", "--read", "stepCount"])
        let watch = try #require(created.out.split(separator: "\n").first { $0.hasPrefix("hkd1_") }.map(String.init))
        let refused = try Self.exchange(
            [
                Self.request("DELETE", "/v1/subjects/anna/samples?type=heartRate&all", token: watch),
                // allow-unseen: hkq first checks the names against the sources the token may see (it sees none here).
                Self.request(
                    "PUT", "/v1/subjects/anna/sources?type=heartRate&priority=iPhone&allow-unseen", token: watch),
                Self.request("PUT", "/v1/subjects/anna/characteristics?biologicalSex=male", token: watch),
                Self.request("DELETE", "/v1/subjects/ben/samples?type=stepCount&all", token: watch),
                Self.request("PUT", "/v1/subjects/anna/sources?type=stepCount&priority=Apple+Watch", token: watch),
            ], port: port)
        #expect(refused.map(\.status) == [403, 403, 403, 403, 200], "\(refused.map(\.body))")
        #expect(refused.dropLast().allSatisfy { $0.body.contains("\"code\":301") })
        let after = try await HKQBinaryTests.hkq(admin + ["--format", "csv", "samples", "heartRate"])
        #expect(after.out.split(separator: "\n").count == 2, "the heart rate sample stays")
        await hkd.stop()
    }

    @Test("Idempotency-Key: a retried POST repeats the first answer and stores once; bad keys are refused")
    func idempotencyKey() async throws {
        let (hkd, port) = try await Self.server()
        func post(_ body: String, key: String?) -> String {
            Self.request(
                "POST", "/v1/subjects/anna/samples", token: hkd.token,
                headers: ["Content-Type: text/csv"] + (key.map { ["Idempotency-Key: \($0)"] } ?? []), body: body)
        }
        let other = """
            type,start,end,value,unit,source
            stepCount,2026-12-01T06:00:00-05:00,2026-12-01T06:10:00-05:00,300,count,iPhone
            """
        let responses = try Self.exchange(
            [
                post(Self.walk, key: "walk-2026-11-29"), post(Self.walk, key: "walk-2026-11-29"),
                post(Self.walk, key: nil),
                post(other, key: "walk-2026-11-29"), post(other, key: String(repeating: "k", count: 256)),
                post(other, key: "two words"),
                Self.request(
                    "DELETE", "/v1/subjects/anna/samples?type=stepCount&source=Nobody", token: hkd.token,
                    headers: ["Idempotency-Key: \(String(repeating: "k", count: 255))"]),
            ], port: port)
        #expect(responses.map(\.status) == [200, 200, 200, 200, 400, 400, 200], "\(responses.map(\.body))")
        // The retry under the key answers what the first POST did; without the key the rows count as stored.
        #expect(responses[0].body.contains("\"inserted\":4"), "\(responses[0].body)")
        #expect(responses[1].body == responses[0].body)
        #expect(responses[2].body.contains("\"inserted\":0"), "\(responses[2].body)")
        // Other rows under the same key are stored as any others.
        #expect(responses[3].body.contains("\"inserted\":1"), "\(responses[3].body)")
        #expect(responses[4].body.contains("1 to 255 characters"), "\(responses[4].body)")
        let samples = try await HKQBinaryTests.hkq(
            HKQBinaryTests.anna(at: hkd) + ["--format", "csv", "samples", "stepCount"])
        #expect(samples.out.split(separator: "\n").count == 1 + 5)
        // hkq insert takes the same key: its first run under it repeats the HTTP POST's answer.
        let hkq = try await HKQBinaryTests.hkq(
            HKQBinaryTests.anna(at: hkd) + ["--format", "json", "insert", "-", "--idempotency-key", "walk-2026-11-29"],
            input: Self.walk)
        #expect(hkq.out == responses[0].body)
        await hkd.stop()
    }

    @Test("CORS: off by default; with --http-cors the named origins alone get preflights and Allow-Origin")
    func cors() async throws {
        let preflight = { (origin: String) in
            Self.request(
                "OPTIONS", "/v1/subjects/anna/samples", token: nil,
                headers: [
                    "Origin: \(origin)", "Access-Control-Request-Method: POST",
                    "Access-Control-Request-Headers: authorization, content-type",
                ])
        }
        let (plain, plainPort) = try await Self.server()
        let off = try Self.exchange(
            [preflight("https://dash.example.org"), Self.get("/v1/types", token: plain.token)], port: plainPort)
        #expect(off.map(\.status) == [405, 200])
        #expect(
            off.allSatisfy {
                $0.headers["access-control-allow-origin"] == nil && $0.headers["vary"]?.contains("Origin") != true
            })
        await plain.stop()

        let (hkd, port) = try await Self.server([
            "--http-cors", "https://dash.example.org", "--http-cors", "http://localhost:3000,http://127.0.0.1:8080",
        ])
        func get(origin: String, token: String?) -> String {
            Self.request("GET", "/v1/types", token: token, headers: ["Origin: \(origin)"])
        }
        let responses = try Self.exchange(
            [
                preflight("https://dash.example.org"), preflight("https://evil.example"),
                get(origin: "http://localhost:3000", token: hkd.token),
                get(origin: "https://evil.example", token: hkd.token),
                get(origin: "http://127.0.0.1:8080", token: nil),
            ], port: port)
        #expect(responses.map(\.status) == [200, 403, 200, 200, 401])
        let allowed = responses[0].headers
        #expect(allowed["access-control-allow-origin"] == "https://dash.example.org")
        #expect(allowed["access-control-allow-methods"] == "GET, HEAD, POST, DELETE")
        #expect(allowed["access-control-allow-headers"]?.contains("Authorization") == true)
        #expect(allowed["access-control-allow-credentials"] == nil)
        #expect(responses[1].headers["access-control-allow-origin"] == nil)
        #expect(responses[2].headers["access-control-allow-origin"] == "http://localhost:3000")
        #expect(responses[2].headers["vary"] == "Origin, Accept-Encoding")
        #expect(responses[3].headers["access-control-allow-origin"] == nil)
        // Errors carry the header too, so a page can read why (the 401 here).
        #expect(responses[4].headers["access-control-allow-origin"] == "http://127.0.0.1:8080")
        #expect(responses[4].headers["access-control-expose-headers"]?.contains("WWW-Authenticate") == true)
        #expect(responses.allSatisfy { $0.headers["access-control-allow-origin"] != "*" })
        await hkd.stop()
    }
}
