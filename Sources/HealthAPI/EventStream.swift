import HKQKit
import HealthHTTP
import HealthModel
import HealthServer
import HealthWire

/// `GET /v1/subjects/{subject}/events?type=TYPE[,TYPE…]`: the subject's changes of one or more types as
/// server-sent events, the live form of `hkq changes` (as `hkq watch` is over the binary protocol).
///
/// `type` names the followed types, comma-separated and/or repeated (`type=a,b&type=c`), at most ``maxTypes``,
/// each once. Each event's data is one line `hkq changes --format ndjson` prints for a change
/// (`{"kind":"added","type":…}` or `{"kind":"deleted","type":…}`, as `hkq watch` prints them), so the HTTP body is
/// again hkq's output, and the line names its type. Each type is followed on its own: its changes come in pages
/// after its own anchor (anchors of different types are not comparable).
///
/// An event's `id` is the position of every followed type after that event, in the order the types were named,
/// comma-separated: `POS[,POS…]`, where each `POS` is `ANCHOR` (after the page that ends at ANCHOR) or
/// `ANCHOR:N` (the first N changes of the page after ANCHOR seen). With one type that is `ANCHOR` or `ANCHOR:N`.
/// A client reconnecting with `Last-Event-ID` (or the `anchor` parameter in the same form, default `0` for each
/// type: every change so far, then live) gets exactly the changes of each type after the last it saw. While
/// nothing changes, a comment line every ``heartbeat`` keeps proxies from closing the connection. When the
/// server stops or this node no longer serves the subject (a partition moved), an `end` event says so and the
/// body ends with its last chunk (see ``EventChannel``): the client reconnects and is answered by the new owner.
/// With `collection` the stream follows a statistics collection instead (``CollectionEvents``).
struct EventStream: Sendable {
    /// How long the stream stays silent before a heartbeat comment.
    static let heartbeat: Duration = .seconds(15)
    /// The most types one stream follows.
    static let maxTypes = 16

    /// Where one type's changes resume: after `anchor`, skipping the first `skip` changes of the page after it.
    struct Cursor: Equatable, Sendable {
        var anchor: UInt64
        var skip: Int

        /// A cursor from its text, `ANCHOR` or `ANCHOR:N`; nil for anything else.
        init?(_ text: Substring) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let anchor = UInt64(parts[0]) else { return nil }
            let skip = parts.count == 2 ? Int(parts[1]) : 0
            guard let skip, skip >= 0 else { return nil }
            self.init(anchor: anchor, skip: skip)
        }

        init(anchor: UInt64, skip: Int) {
            self.anchor = anchor
            self.skip = skip
        }

        /// `ANCHOR`, or `ANCHOR:N` when changes of the page after it were seen.
        var text: String { skip == 0 ? String(anchor) : "\(anchor):\(skip)" }
    }

    /// Where a stream resumes: one cursor per followed type, in the order the types were named; an event id.
    struct Position: Equatable, Sendable {
        var cursors: [Cursor]

        /// A position from an event id or anchor for `count` types: one cursor each, comma-separated; nil for
        /// anything else.
        init?(_ text: String, count: Int) {
            let cursors = text.split(separator: ",", omittingEmptySubsequences: false).map(Cursor.init)
            guard cursors.count == count, cursors.allSatisfy({ $0 != nil }) else { return nil }
            self.cursors = cursors.compactMap { $0 }
        }

        /// The event id: the cursors' text, comma-separated.
        var text: String { cursors.map(\.text).joined(separator: ",") }
    }

    let subject: String
    let types: [QuantityType]
    /// hkq `changes` options besides the type and anchor (`tz`, `unit`).
    let options: [String]
    let identity: ClientIdentity
    let server: HealthServer
    let start: Position
    /// The request's target (for the `end` event's location).
    let target: String

    /// The stream for a request to `target`, or the problem with it.
    static func response(
        subject: String, query: [(name: String, value: String)], lastEventID: String?, identity: ClientIdentity,
        server: HealthServer, target: String
    ) -> HTTPResponse {
        if query.contains(where: { $0.name == "collection" }) {
            return CollectionEvents.response(
                subject: subject, query: query, lastEventID: lastEventID, identity: identity, server: server,
                target: target)
        }
        var options: [String] = []
        var typeNames: [Substring] = []
        var anchor: String?
        for (name, value) in query {
            switch name {
            case "type": typeNames += value.split(separator: ",", omittingEmptySubsequences: false)
            case "anchor": anchor = value
            case "tz", "unit": options += ["--" + name, value]
            default: return HTTPProblem.badRequest("the parameter \(name) is not accepted here").response
            }
        }
        guard !typeNames.isEmpty else { return HTTPProblem.badRequest("the type parameter is required").response }
        guard typeNames.count <= maxTypes else {
            return HTTPProblem.badRequest(
                "\(typeNames.count) types named; one stream follows at most \(maxTypes)"
            ).response
        }
        var types: [QuantityType] = []
        for name in typeNames {
            let type: QuantityType
            do {
                type = try QuantityType.named(String(name))
            } catch {
                return HTTPProblem(error as? HealthError ?? HealthError(.unknownQuantityType, "\(error)")).response
            }
            guard !types.contains(type) else {
                return HTTPProblem.badRequest("the type \(type.identifier) is named twice").response
            }
            types.append(type)
        }
        let resume = lastEventID ?? anchor ?? Array(repeating: "0", count: types.count).joined(separator: ",")
        guard let start = Position(resume, count: types.count) else {
            return HTTPProblem.badRequest(
                "the anchor or Last-Event-ID \(resume) is not a position of the \(types.count) types named: "
                    + "ANCHOR or ANCHOR:N for each, comma-separated"
            ).response
        }
        let stream = EventStream(
            subject: subject, types: types, options: options, identity: identity, server: server, start: start,
            target: target)
        return eventStream { body in stream.run(into: body) }
    }

    /// A `200` `text/event-stream` response whose body `produce` writes (never compressed).
    static func eventStream(_ produce: @escaping @Sendable (any HTTPBodyWriter) -> HTTPResponse?) -> HTTPResponse {
        var response = HTTPResponse(
            status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        response.producer = HTTPBodyProducer(compressible: false, produce)
        return response
    }

    /// One page of changes after an anchor: the change lines and the anchor after them.
    struct Page {
        var changes: [String]
        var anchor: UInt64
        var more: Bool
    }

    /// Runs `hkq changes --format ndjson` for `type` after `anchor`; the problem when it fails.
    func page(of type: QuantityType, after anchor: UInt64) -> Result<Page, HTTPProblemResponse> {
        let out = CapturedText()
        let arguments =
            ["--format", "ndjson", "--subject", subject, "changes", type.identifier, "--anchor", String(anchor)]
            + options
        if let failure = HealthAPI.run(arguments, for: identity, on: server, out: out) {
            return .failure(HTTPProblemResponse(response: failure))
        }
        var lines = out.text.split(separator: "\n").map(String.init)
        guard let last = lines.popLast(), let end = AnchorLine(last) else {
            return .failure(
                HTTPProblemResponse(
                    response: HTTPProblem(HealthError(.internalError, "changes printed no anchor")).response))
        }
        return .success(Page(changes: lines, anchor: end.anchor, more: end.more))
    }

    /// Writes the events until the client leaves, the stream must end (the server stops, this node stops serving
    /// the subject), or a query fails.
    func run(into body: any HTTPBodyWriter) -> HTTPResponse? {
        let watch = server.watchChanges(subject: subject, types: types)
        defer { watch.close() }
        body.onClientGone { watch.end(.clientGone) }
        var channel = EventChannel(body: body, target: target)
        var position = start
        // The types to read now: every one at first, then those that changed or have more.
        var due = Array(types.indices)
        while true {
            // One page of each due type in turn; again at once for those that have more.
            var more: [Int] = []
            for index in due {
                let type = types[index]
                let cursor = position.cursors[index]
                let page: Page
                switch self.page(of: type, after: cursor.anchor) {
                case .success(let found): page = found
                case .failure(let failure):
                    return channel.failed(failure.response, subject: subject, server: server)
                }
                var text = ""
                let fresh = page.changes.dropFirst(min(cursor.skip, page.changes.count))
                for (offset, line) in fresh.enumerated() {
                    let isLast = offset == fresh.count - 1
                    position.cursors[index] =
                        isLast
                        ? Cursor(anchor: page.anchor, skip: 0)
                        : Cursor(anchor: cursor.anchor, skip: cursor.skip + offset + 1)
                    text += "id: \(position.text)\ndata: \(line)\n\n"
                }
                if !text.isEmpty || !channel.started {
                    guard channel.send(text) else { return nil }
                }
                if page.anchor != cursor.anchor { position.cursors[index] = Cursor(anchor: page.anchor, skip: 0) }
                if page.more { more.append(index) }
            }
            if !more.isEmpty {
                due = more
                continue
            }
            guard let changed = channel.next(watch) else { return nil }
            due = changed.sorted()
        }
    }
}

/// A problem response as a failure value.
struct HTTPProblemResponse: Error {
    let response: HTTPResponse
}

/// The last line `hkq changes --format ndjson` prints: `{"kind":"anchor","anchor":N,"more":B}`.
struct AnchorLine {
    let anchor: UInt64
    let more: Bool

    init?(_ line: String) {
        guard line.hasPrefix("{\"kind\":\"anchor\",\"anchor\":") else { return nil }
        let digits = line.dropFirst("{\"kind\":\"anchor\",\"anchor\":".count).prefix { $0.isNumber }
        guard let anchor = UInt64(digits) else { return nil }
        self.anchor = anchor
        more = line.hasSuffix("\"more\":true}")
    }
}
