import CHTTPParser

/// Turns the bytes of one connection into ``HTTPRequest``s with http-parser (Debian's `libhttp-parser-dev`),
/// one request at a time: after each complete request the parser pauses, so pipelined requests wait in the
/// caller's buffer until the previous one is answered.
///
/// Every size is capped before it is buffered (``Limits``); a request over a cap, or bytes that are not HTTP/1.x,
/// end the connection with an ``HTTPParseError`` naming the status to answer with. Not thread-safe: one
/// connection's thread uses it.
public final class HTTPRequestParser {
    /// The caps a request must stay within.
    public struct Limits: Sendable, Hashable {
        /// The request line and header fields together, in bytes.
        public var maxHeaderBytes: Int
        /// The number of header fields.
        public var maxHeaderCount: Int
        /// The body, in bytes (after chunked decoding).
        public var maxBodyBytes: Int

        public init(maxHeaderBytes: Int = 16 * 1024, maxHeaderCount: Int = 100, maxBodyBytes: Int = 64 << 20) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxBodyBytes = maxBodyBytes
        }
    }

    private let parser: UnsafeMutablePointer<http_parser>
    private let state: ParseState

    /// A parser for the requests of one connection.
    public init(limits: Limits = Limits()) {
        parser = .allocate(capacity: 1)
        http_parser_init(parser, HTTP_REQUEST)
        state = ParseState(limits: limits)
    }

    deinit { parser.deallocate() }

    /// Whether part of a request has arrived (a header or body byte), so a deadline runs for the rest.
    public var isInsideRequest: Bool { state.started && state.complete == nil }

    /// Parses from `bytes` up to the end of the next complete request. Returns the request (nil when `bytes` ended
    /// before it did) and how many bytes were consumed; the caller keeps the rest for the next call. Throws
    /// ``HTTPParseError`` for bytes that are not a request within the limits; the connection must then close.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> (HTTPRequest?, Int) {
        if let error = state.error { throw error }
        http_parser_pause(parser, 0)
        let consumed = withUnsafePointer(to: Self.settings) { settings in
            parser.pointee.data = Unmanaged.passUnretained(state).toOpaque()
            defer { parser.pointee.data = nil }
            return http_parser_execute(
                parser, settings, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        let errno = http_errno(rawValue: parser.pointee.http_errno)
        if let error = state.error { throw error }
        if errno != HPE_OK && errno != HPE_PAUSED {
            let name = String(cString: http_errno_name(errno))
            let description = String(cString: http_errno_description(errno))
            let error = HTTPParseError(status: 400, message: "not a valid HTTP/1.1 request (\(name): \(description))")
            state.error = error
            throw error
        }
        if parser.pointee.upgrade != 0 {
            let error = HTTPParseError(status: 400, message: "protocol upgrades are not supported")
            state.error = error
            throw error
        }
        guard let request = state.complete else { return (nil, consumed) }
        state.reset()
        return (request, consumed)
    }

    /// The callbacks: each finds the ``ParseState`` in the parser's `data`.
    private static let settings: http_parser_settings = {
        var settings = http_parser_settings()
        http_parser_settings_init(&settings)
        settings.on_message_begin = { parser in
            ParseState.of(parser).started = true
            return 0
        }
        settings.on_url = { parser, at, length in ParseState.of(parser).append(at, length, to: .url) }
        settings.on_header_field = { parser, at, length in ParseState.of(parser).append(at, length, to: .field) }
        settings.on_header_value = { parser, at, length in ParseState.of(parser).append(at, length, to: .value) }
        settings.on_headers_complete = { parser in
            guard let parser else { return 1 }
            return ParseState.of(parser).headersComplete(
                method: String(cString: http_method_str(http_method(rawValue: parser.pointee.method))),
                major: parser.pointee.http_major)
        }
        settings.on_body = { parser, at, length in ParseState.of(parser).append(at, length, to: .body) }
        settings.on_message_complete = { parser in
            guard let parser else { return 1 }
            let state = ParseState.of(parser)
            state.finish(keepAlive: http_should_keep_alive(parser) != 0, minorVersion: Int(parser.pointee.http_minor))
            http_parser_pause(parser, 1)
            return 0
        }
        return settings
    }()
}

/// Why bytes could not be taken as a request: the status to answer with before closing, and a message.
public struct HTTPParseError: Error, Sendable, Equatable {
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// 400 for malformed bytes, 413 for a body over the cap, 431 for headers over theirs, 505 for HTTP/2 or 0.9.
    public var status: Int
    public var message: String
}

/// What the callbacks gather for the request being parsed.
private final class ParseState {
    enum Part { case url, field, value, body }

    let limits: HTTPRequestParser.Limits
    var started = false
    var method = ""
    var url: [UInt8] = []
    var headers: [(name: [UInt8], value: [UInt8])] = []
    var headerBytes = 0
    var body: [UInt8] = []
    var lastPart: Part?
    var complete: HTTPRequest?
    var error: HTTPParseError?

    init(limits: HTTPRequestParser.Limits) { self.limits = limits }

    static func of(_ parser: UnsafeMutablePointer<http_parser>?) -> ParseState {
        Unmanaged<ParseState>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
    }

    /// Appends a callback's bytes to `part`; nonzero stops the parser (a cap was passed).
    func append(_ at: UnsafePointer<CChar>?, _ length: Int, to part: Part) -> Int32 {
        started = true
        let bytes = UnsafeRawBufferPointer(start: at, count: length)
        if part == .body {
            guard body.count + length <= limits.maxBodyBytes else {
                return fail(413, "the body is larger than \(limits.maxBodyBytes) bytes")
            }
            body.append(contentsOf: bytes)
            return 0
        }
        headerBytes += length
        guard headerBytes <= limits.maxHeaderBytes else {
            return fail(431, "the request line and headers are larger than \(limits.maxHeaderBytes) bytes")
        }
        switch part {
        case .url:
            url.append(contentsOf: bytes)
        case .field:
            if lastPart != .field {
                guard headers.count < limits.maxHeaderCount else {
                    return fail(431, "the request has more than \(limits.maxHeaderCount) header fields")
                }
                headers.append(([], []))
            }
            headers[headers.count - 1].name.append(contentsOf: bytes)
        case .value:
            if headers.isEmpty { headers.append(([], [])) }
            headers[headers.count - 1].value.append(contentsOf: bytes)
        case .body:
            break
        }
        lastPart = part
        return 0
    }

    func headersComplete(method: String, major: UInt16) -> Int32 {
        guard major == 1 else { return fail(505, "only HTTP/1.0 and HTTP/1.1 are served") }
        self.method = method
        return 0
    }

    func finish(keepAlive: Bool, minorVersion: Int) {
        complete = HTTPRequest(
            method: method, target: String(decoding: url, as: UTF8.self),
            headers: headers.map {
                (String(decoding: $0.name, as: UTF8.self), String(decoding: $0.value, as: UTF8.self))
            },
            body: body, keepAlive: keepAlive, minorVersion: minorVersion)
    }

    func reset() {
        started = false
        method = ""
        url = []
        headers = []
        headerBytes = 0
        body = []
        lastPart = nil
        complete = nil
    }

    private func fail(_ status: Int, _ message: String) -> Int32 {
        error = HTTPParseError(status: status, message: message)
        return 1
    }
}
