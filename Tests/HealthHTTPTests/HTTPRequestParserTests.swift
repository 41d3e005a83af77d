import Testing

@testable import HealthHTTP

@Suite("HTTP request parsing")
struct HTTPRequestParserTests {
    /// Every request in `bytes`, fed in pieces of `piece` bytes, and the error that ended parsing, if any.
    static func parseAll(
        _ bytes: [UInt8], piece: Int = .max, limits: HTTPRequestParser.Limits = .init()
    ) -> (requests: [HTTPRequest], error: HTTPParseError?) {
        let parser = HTTPRequestParser(limits: limits)
        var requests: [HTTPRequest] = []
        var buffer: [UInt8] = []
        var offset = 0
        while offset < bytes.count || !buffer.isEmpty {
            let next = min(bytes.count, offset + piece)
            buffer += bytes[offset..<next]
            offset = next
            do {
                while true {
                    let (request, used) = try buffer.withUnsafeBytes { try parser.parse($0) }
                    buffer.removeFirst(used)
                    guard let request else { break }
                    requests.append(request)
                }
            } catch let error as HTTPParseError {
                return (requests, error)
            } catch {
                Issue.record("unexpected \(error)")
                return (requests, nil)
            }
            if offset == bytes.count, !buffer.isEmpty, requests.isEmpty || parser.isInsideRequest { break }
            if offset == bytes.count { break }
        }
        return (requests, nil)
    }

    @Test("a GET with a query, whole or a byte at a time, gives the same request")
    func getInPieces() {
        let text =
            "GET /v1/subjects/anna%20b/samples?type=stepCount&tz=Europe%2FParis&x HTTP/1.1\r\n"
            + "Host: localhost\r\nAuthorization: Bearer hkd1_abc\r\n\r\n"
        for piece in [Int.max, 1, 7] {
            let (requests, error) = Self.parseAll(Array(text.utf8), piece: piece)
            #expect(error == nil)
            #expect(requests.count == 1)
            let request = requests[0]
            #expect(request.method == "GET")
            #expect(request.pathSegments == ["v1", "subjects", "anna b", "samples"])
            #expect(request.queryItems?.map(\.name) == ["type", "tz", "x"])
            #expect(request.queryItems?.map(\.value) == ["stepCount", "Europe/Paris", ""])
            #expect(request.header("authorization") == "Bearer hkd1_abc")
            #expect(request.keepAlive)
        }
    }

    @Test("pipelined requests come out one at a time, bodies by length and chunked")
    func pipelined() {
        let text =
            "POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
            + "POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
            + "GET /c HTTP/1.0\r\n\r\n"
        let (requests, error) = Self.parseAll(Array(text.utf8), piece: 5)
        #expect(error == nil)
        #expect(requests.map(\.target) == ["/a", "/b", "/c"])
        #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == ["hello", "abcde", ""])
        #expect(requests.map(\.keepAlive) == [true, true, false])
    }

    @Test("caps and malformed bytes end parsing with the status to answer")
    func refusals() {
        let limits = HTTPRequestParser.Limits(maxHeaderBytes: 64, maxHeaderCount: 3, maxBodyBytes: 4)
        let cases: [(String, Int)] = [
            ("GET /\(String(repeating: "a", count: 80)) HTTP/1.1\r\n\r\n", 431),
            ("GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\nd: 4\r\n\r\n", 431),
            ("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 413),
            ("HELLO\r\n\r\n", 400),
            ("GET / HTTP/2.0\r\n\r\n", 505),
            ("GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", 400),
        ]
        for (text, status) in cases {
            let (requests, error) = Self.parseAll(Array(text.utf8), limits: limits)
            #expect(requests.isEmpty, "\(text)")
            #expect(error?.status == status, "\(text): \(String(describing: error))")
        }
    }

    @Test("bad percent escapes in the path or query are refused, not guessed")
    func badEscapes() {
        #expect(HTTPRequest(method: "GET", target: "/v1/%zz").pathSegments == nil)
        #expect(HTTPRequest(method: "GET", target: "/v1?a=%E2%82").queryItems == nil)
        #expect(HTTPRequest(method: "GET", target: "/v1?a=%E2%82%AC+b").queryItems?.first?.value == "€ b")
    }

    @Test("a response names its length and closes when asked")
    func response() {
        let response = HTTPResponse(status: 404, contentType: "text/plain", "no")
        #expect(
            String(decoding: response.serialized(keepAlive: false), as: UTF8.self)
                == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno"
        )
    }
}
