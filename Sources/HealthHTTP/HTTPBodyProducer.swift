/// Where a streamed response body goes: the server's side of a ``HTTPBodyProducer``.
///
/// Called from the producer's own thread (never an event loop's). Thread-safe.
public protocol HTTPBodyWriter: Sendable {
    /// Appends body bytes; blocks while the connection has more unsent bytes than its cap (backpressure).
    /// Returns false once the client has gone: the producer should stop (later writes are dropped).
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Sends what is buffered now rather than when a chunk fills (a live event); false once the client has gone.
    func flush() -> Bool
    /// Adds a header field to the response's head while it has not left (before the body's first bytes go
    /// out); false once it has.
    func addHeader(_ name: String, _ value: String) -> Bool
    /// Calls `body` once, from any thread, when the client has gone (at once if it has): a producer that waits
    /// for something else meanwhile (an event stream between events) stops then rather than at its next write.
    func onClientGone(_ body: @escaping @Sendable () -> Void)
}

extension HTTPBodyWriter {
    /// Appends the UTF-8 bytes of `text` (see ``write(_:)``).
    public func write(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }
}

/// A response body written while it is produced, on a thread of its own, into an ``HTTPBodyWriter``.
///
/// A body that ends small is sent with `Content-Length`; a larger one goes out as it comes with
/// `Transfer-Encoding: chunked`. A producer that fails returns the response to send instead: sent as it is when
/// no byte of the body has left yet; otherwise the chunked body is cut off without its last chunk and the
/// connection closed, which every HTTP/1.1 client reports as an incomplete body.
public struct HTTPBodyProducer: Sendable {
    /// Writes the body; returns `nil` when it is complete, or the response to answer with instead.
    public let produce: @Sendable (any HTTPBodyWriter) -> HTTPResponse?
    /// Whether the body may be compressed (`Content-Encoding: gzip` when the client accepts it).
    public let compressible: Bool

    /// A producer running `produce`; `compressible` unless the body must reach the client as written (events).
    public init(compressible: Bool = true, _ produce: @escaping @Sendable (any HTTPBodyWriter) -> HTTPResponse?) {
        self.produce = produce
        self.compressible = compressible
    }
}

/// The framing of `Transfer-Encoding: chunked` (RFC 9112 §7.1).
public enum HTTPChunk {
    /// One chunk: its size in hexadecimal, CRLF, the bytes, CRLF. Empty bytes give no chunk (an empty chunk
    /// would end the body).
    public static func framed(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        var framed = Array((String(bytes.count, radix: 16) + "\r\n").utf8)
        framed.reserveCapacity(framed.count + bytes.count + 2)
        framed.append(contentsOf: bytes)
        framed += [13, 10]
        return framed
    }

    /// The last chunk and the empty trailer: the body is complete.
    public static let last: [UInt8] = Array("0\r\n\r\n".utf8)
}

/// `Accept-Encoding` (RFC 9110 §12.5.3) as far as gzip is concerned.
public enum ContentCoding {
    /// Whether a request's `Accept-Encoding` accepts gzip: named (or `x-gzip`, or `*`) with a q-value above 0.
    /// An explicit `gzip;q=0` refuses it even when `*` is accepted.
    public static func acceptsGzip(_ acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        var gzip: Double?
        var any: Double?
        for element in acceptEncoding.split(separator: ",") {
            let parts = element.split(separator: ";").map(trimmed)
            guard let coding = parts.first?.lowercased(), !coding.isEmpty else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map(trimmed)
                if pair.count == 2, pair[0].lowercased() == "q" { quality = Double(pair[1]) ?? 0 }
            }
            switch coding {
            case "gzip", "x-gzip": gzip = quality
            case "*": any = quality
            default: break
            }
        }
        return (gzip ?? any ?? 0) > 0
    }

    /// `text` without the spaces and tabs around it.
    private static func trimmed(_ text: Substring) -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(text.drop(while: isBlank).reversed().drop(while: isBlank).reversed())
    }
}
