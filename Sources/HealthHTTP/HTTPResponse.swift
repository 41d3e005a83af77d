/// One HTTP/1.1 response: status, header fields and a whole body, written with ``serialized(keepAlive:)``, or a
/// body its ``producer`` writes as it goes (see ``HTTPBodyProducer``).
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header fields besides `Content-Length`, `Transfer-Encoding` and `Connection`, which the server writes.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Writes the body instead of ``body`` (which is then empty), after the head; `nil` for a whole body.
    public var producer: HTTPBodyProducer?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `text` with the media type `contentType`.
    public init(status: Int, contentType: String, _ text: String, headers: [(name: String, value: String)] = []) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: Array(text.utf8))
    }

    /// Names `field` in the response's one `Vary` header, adding the header if there is none.
    public mutating func vary(on field: String) {
        guard let index = headers.firstIndex(where: { $0.name.lowercased() == "vary" }) else {
            headers.append(("Vary", field))
            return
        }
        headers[index].value += ", " + field
    }

    /// The status line, the header fields with `Content-Length` and `Connection`, and the body (only the head
    /// unless `sendsBody`: the answer to `HEAD`, which still names the length a `GET` would get).
    public func serialized(keepAlive: Bool, sendsBody: Bool = true) -> [UInt8] {
        head(keepAlive: keepAlive, framing: .length(body.count)) + (sendsBody ? body : [])
    }

    /// How a body is delimited (RFC 9112 §6.3).
    public enum BodyFraming: Sendable, Equatable {
        /// `Content-Length` bytes follow the head.
        case length(Int)
        /// `Transfer-Encoding: chunked`: the body follows as ``HTTPChunk``s.
        case chunked
        /// Neither field: no body follows (the answer to `HEAD` of a streamed body), or the body ends when the
        /// connection closes (a streamed body for an HTTP/1.0 client, which knows no chunks; `keepAlive` false).
        case none
    }

    /// The status line and the header fields, ending with the blank line: with the field `framing` calls for,
    /// and `Connection: close` unless `keepAlive`.
    public func head(keepAlive: Bool, framing: BodyFraming) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        switch framing {
        case .length(let length): head += "Content-Length: \(length)\r\n"
        case .chunked: head += "Transfer-Encoding: chunked\r\n"
        case .none: break
        }
        head += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        return Array(head.utf8)
    }

    /// The reason phrase of `status` (RFC 9110), or an empty one for a status it does not name.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 307: "Temporary Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }
}
