/// One HTTP/1.1 request as it arrived: method, target, headers and the whole body.
public struct HTTPRequest: Sendable, Equatable {
    /// The method in upper case, e.g. `GET`.
    public var method: String
    /// The request target as sent, e.g. `/v1/subjects/anna/samples?type=stepCount`.
    public var target: String
    /// The header fields in arrival order; names as sent (compare them with ``header(_:)``).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Whether the client keeps the connection open after the response (HTTP/1.1's default).
    public var keepAlive: Bool
    /// The minor version of the request's HTTP/1.x: 0 for HTTP/1.0, whose clients know no chunked bodies.
    public var minorVersion: Int

    public init(
        method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        keepAlive: Bool = true, minorVersion: Int = 1
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
        self.minorVersion = minorVersion
    }

    /// Whether a response may use `Transfer-Encoding: chunked` (HTTP/1.1 and later; not HTTP/1.0).
    public var acceptsChunked: Bool { minorVersion >= 1 }

    /// The value of the first header named `name` (ASCII case-insensitive), if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The target's path, percent-decoded segment by segment, without the query: `["v1", "subjects", "anna"]`.
    /// `nil` when a segment is not valid percent-encoded UTF-8.
    public var pathSegments: [String]? {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        var segments: [String] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let decoded = Self.percentDecoded(segment, plusIsSpace: false) else { return nil }
            segments.append(decoded)
        }
        return segments
    }

    /// The query's parameters in order, percent-decoded (`+` is a space); `nil` when one is not valid
    /// percent-encoded UTF-8. A parameter without `=` has an empty value.
    public var queryItems: [(name: String, value: String)]? {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return [] }
        var items: [(String, String)] = []
        for pair in parts[1].split(separator: "&", omittingEmptySubsequences: true) {
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.percentDecoded(halves[0], plusIsSpace: true),
                let value = Self.percentDecoded(halves.count == 2 ? halves[1] : "", plusIsSpace: true)
            else { return nil }
            items.append((name, value))
        }
        return items
    }

    /// `text` with `%XX` escapes (and, in queries, `+`) decoded; `nil` for a bad escape or invalid UTF-8.
    public static func percentDecoded(_ text: Substring, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.body == rhs.body && lhs.keepAlive == rhs.keepAlive
            && lhs.minorVersion == rhs.minorVersion
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }
}
