import HealthModel

/// Reads the points of a GPX route file as Apple Health exports write them (`workout-routes/route_….gpx`):
/// every `<trkpt lat=… lon=…>` with its `<time>`, and `<ele>`, `<speed>` and `<course>` when present (HEALTHKIT.md
/// §13). Bounded: at most ``maxBytes`` of file and ``WorkoutRoute/Limits/maxPoints`` points, each point's markup
/// at most ``maxPointBytes``. Anything else, comments and unknown elements included, is passed over; a file
/// without `<gpx`, a point without a valid latitude, longitude or time, a point the server would refuse
/// (``RoutePoint/violation``: a time outside years 0001–9999, a speed past `Float`'s range …), or an
/// unterminated point is refused with a ``Rejection`` naming the file, the problem and the point: a route is read
/// whole or not at all. Pure, thread-safe.
enum GPXReader {
    /// Largest route file read.
    static let maxBytes = 32 << 20
    /// Longest `<trkpt>` element, children included.
    static let maxPointBytes = 4096

    /// The points of `bytes`, by time (a stable sort, for files that list them out of order); `path` names the
    /// file in rejections.
    static func points(_ bytes: [UInt8], path: String? = nil) throws -> [RoutePoint] {
        let file = path.map { "route file \"\($0.prefix(80))\"" } ?? "route file"
        guard bytes.count <= maxBytes else {
            throw Rejection("route file is too large", "\(file) of \(bytes.count) bytes; at most \(maxBytes)")
        }
        guard find("<gpx", in: bytes, from: 0) != nil else {
            throw Rejection("route file is not GPX", "\(file) has no <gpx> element")
        }
        var points: [RoutePoint] = []
        var position = 0
        while let open = find("<trkpt", in: bytes, from: position) {
            guard points.count < WorkoutRoute.Limits.maxPoints else {
                var count = points.count + 1
                var next = open + 6
                while let later = find("<trkpt", in: bytes, from: next) {
                    count += 1
                    next = later + 6
                }
                throw Rejection(
                    "route file has too many points",
                    "\(file) has \(count) points; at most \(WorkoutRoute.Limits.maxPoints)")
            }
            let index = points.count
            func fail(_ why: String) -> Rejection {
                Rejection("route file point is not valid", "\(file) point \(index) (byte \(open)): \(why)")
            }
            let limit = min(bytes.count, open + maxPointBytes)
            guard let tagEnd = find(">", in: bytes, from: open, before: limit) else {
                throw fail("its tag does not end within \(maxPointBytes) bytes")
            }
            let tag = Array(bytes[open..<tagEnd])
            let selfClosing = tag.last == UInt8(ascii: "/")
            var end = tagEnd + 1
            var body: [UInt8] = []
            if !selfClosing {
                guard let close = find("</trkpt>", in: bytes, from: tagEnd, before: limit) else {
                    throw fail("no </trkpt> within \(maxPointBytes) bytes")
                }
                body = Array(bytes[(tagEnd + 1)..<close])
                end = close + 8
            }
            guard let latitude = attribute("lat", of: tag).flatMap(number), abs(latitude) <= 90,
                let longitude = attribute("lon", of: tag).flatMap(number), abs(longitude) <= 180
            else { throw fail("no latitude and longitude within ±90 and ±180 degrees") }
            guard let text = element("time", in: body), let time = instant(text) else {
                throw fail("no <time> in ISO 8601 (2023-11-14T22:13:20Z)")
            }
            let optional = try ["ele", "speed", "course"].map { name -> Double? in
                guard let text = element(name, in: body) else { return nil }
                guard let value = number(text) else { throw fail("<\(name)> is not a number") }
                return value
            }
            let point = RoutePoint(
                time: time, latitude: latitude, longitude: longitude, elevation: optional[0], speed: optional[1],
                course: optional[2])
            if let violation = point.violation { throw fail(violation) }
            points.append(point)
            position = end
        }
        guard !points.isEmpty else { throw Rejection("route file has no points", "\(file) has no <trkpt>") }
        return points.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            .map(\.element)
    }

    // MARK: - Scanning

    /// Where `literal` starts in `bytes` at or after `from` and wholly before `before`.
    static func find(_ literal: String, in bytes: [UInt8], from: Int, before: Int? = nil) -> Int? {
        let needle = Array(literal.utf8)
        let end = (before ?? bytes.count) - needle.count
        guard from <= end, let first = needle.first else { return nil }
        var index = from
        while index <= end {
            if bytes[index] == first, bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// The value of ` name="…"` (or single quotes) in a start tag.
    static func attribute(_ name: String, of tag: [UInt8]) -> [UInt8]? {
        for quote in ["\"", "'"] {
            guard let start = find(" \(name)=\(quote)", in: tag, from: 0) else { continue }
            let valueStart = start + name.utf8.count + 3
            guard let valueEnd = find(quote, in: tag, from: valueStart) else { return nil }
            return Array(tag[valueStart..<valueEnd])
        }
        return nil
    }

    /// The text of the first `<name>…</name>` in `body`, trimmed of white space.
    static func element(_ name: String, in body: [UInt8]) -> [UInt8]? {
        guard let open = find("<\(name)>", in: body, from: 0) else { return nil }
        let start = open + name.utf8.count + 2
        guard let close = find("</\(name)>", in: body, from: start) else { return nil }
        let spaces: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var text = body[start..<close]
        while let first = text.first, spaces.contains(first) { text = text.dropFirst() }
        while let last = text.last, spaces.contains(last) { text = text.dropLast() }
        return Array(text)
    }

    static func number(_ text: [UInt8]) -> Double? {
        guard !text.isEmpty, text.count <= 64 else { return nil }
        return text.withUnsafeBufferPointer(DecimalParser.parse).flatMap { $0.isFinite ? $0 : nil }
    }

    /// An ISO 8601 instant (`2023-11-14T22:13:20Z`, `…:20.250+01:00`), fractions of a second to the µs.
    static func instant(_ text: [UInt8]) -> Timestamp? {
        guard text.count >= 20, text.count <= 40 else { return nil }
        var whole = Array(text[0..<19])
        var micros: Int64 = 0
        var rest = 19
        if text[19] == UInt8(ascii: ".") {
            rest = 20
            var scale: Int64 = 100_000
            while rest < text.count, (0x30...0x39).contains(text[rest]) {
                micros += Int64(text[rest] - 0x30) * scale
                scale /= 10
                rest += 1
            }
            guard rest > 20 else { return nil }
        }
        whole += text[rest...]
        guard let seconds = whole.withUnsafeBufferPointer(ExportDateParser.parse) else { return nil }
        return seconds + micros
    }
}

extension WorkoutRoute {
    /// The points of a GPX route file as Apple Health exports write them (see ``GPXReader``); throws
    /// ``ErrorCode/malformedPayload`` naming the problem for anything it refuses.
    public static func points(gpx bytes: [UInt8]) throws -> [RoutePoint] {
        do {
            return try GPXReader.points(bytes)
        } catch let rejection as Rejection {
            throw HealthError(.malformedPayload, rejection.detail)
        }
    }
}
