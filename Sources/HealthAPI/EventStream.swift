import HKQKit
import HealthHTTP
import HealthModel
import HealthServer
import HealthWire

/// `GET /v1/subjects/{subject}/events?type=TYPE`: the subject's changes of a type as server-sent events, the live
/// form of `hkq changes` (as `hkq watch` is over the binary protocol).
///
/// Each event's data is one line `hkq changes --format ndjson` prints for a change (`{"kind":"added",…}` or
/// `{"kind":"deleted",…}`, as `hkq watch` prints them), so the HTTP body is again hkq's output. Changes come in
/// pages after an anchor; the last event of a page has the page's anchor as its `id`, the ones before it
/// `ANCHOR:N` (the N-th change of the page after ANCHOR). A client reconnecting with `Last-Event-ID` (or the
/// `anchor` parameter, default 0: every change so far, then live) gets exactly the changes after the last it
/// saw. While nothing changes, a comment line every ``heartbeat`` keeps proxies from closing the connection. The
/// stream ends (with its last chunk) when this node no longer serves the subject (a partition moved: the client
/// reconnects and is answered by the new owner); a server that stops closes it.
struct EventStream: Sendable {
    /// How long the stream stays silent before a heartbeat comment.
    static let heartbeat: Duration = .seconds(15)

    /// Where a stream resumes: after `anchor`, skipping the first `skip` changes of the page after it.
    struct Cursor: Equatable, Sendable {
        var anchor: UInt64
        var skip: Int

        /// A cursor from an event id or anchor: `ANCHOR` or `ANCHOR:N`; nil for anything else.
        init?(_ text: String) {
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
    }

    let subject: String
    let type: QuantityType
    /// hkq `changes` options besides the anchor (`tz`, `unit`).
    let options: [String]
    let identity: ClientIdentity
    let server: HealthServer
    let start: Cursor

    /// The stream for a request, or the problem with it.
    static func response(
        subject: String, query: [(name: String, value: String)], lastEventID: String?, identity: ClientIdentity,
        server: HealthServer
    ) -> HTTPResponse {
        var options: [String] = []
        var typeName: String?
        var anchor = "0"
        for (name, value) in query {
            switch name {
            case "type": typeName = value
            case "anchor": anchor = value
            case "tz", "unit": options += ["--" + name, value]
            default: return HTTPProblem.badRequest("the parameter \(name) is not accepted here").response
            }
        }
        guard let typeName else { return HTTPProblem.badRequest("the type parameter is required").response }
        let type: QuantityType
        do {
            type = try QuantityType.named(typeName)
        } catch {
            return HTTPProblem(error as? HealthError ?? HealthError(.unknownQuantityType, "\(error)")).response
        }
        guard let start = Cursor(lastEventID ?? anchor) else {
            return HTTPProblem.badRequest("the anchor or Last-Event-ID \(lastEventID ?? anchor) is not an anchor")
                .response
        }
        let stream = EventStream(
            subject: subject, type: type, options: options, identity: identity, server: server, start: start)
        var response = HTTPResponse(
            status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        response.producer = HTTPBodyProducer(compressible: false) { body in stream.run(into: body) }
        return response
    }

    /// One page of changes after `cursor.anchor`: the change lines and the anchor after them.
    struct Page {
        var changes: [String]
        var anchor: UInt64
        var more: Bool
    }

    /// Runs `hkq changes --format ndjson` after `anchor`; the problem when it fails.
    func page(after anchor: UInt64) -> Result<Page, HTTPProblemResponse> {
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

    /// Writes the events until the client leaves, this node stops serving the subject, or a query fails.
    func run(into body: any HTTPBodyWriter) -> HTTPResponse? {
        let watch = server.watchChanges(subject: subject, type: type)
        var cursor = start
        var started = false
        while true {
            let page: Page
            switch self.page(after: cursor.anchor) {
            case .success(let found): page = found
            case .failure(let failure):
                // Before the first byte the problem is the answer; after it, a moved partition ends the stream
                // cleanly (the client reconnects to the owner) and anything else cuts it off.
                guard started else { return failure.response }
                return failure.response.status == 503 || failure.response.status == 307 ? nil : failure.response
            }
            var text = started ? "" : "retry: 1000\n\n"
            let fresh = page.changes.dropFirst(min(cursor.skip, page.changes.count))
            for (offset, line) in fresh.enumerated() {
                let isLast = offset == fresh.count - 1
                let id = isLast ? String(page.anchor) : "\(cursor.anchor):\(cursor.skip + offset + 1)"
                text += "id: \(id)\ndata: \(line)\n\n"
            }
            started = true
            if !text.isEmpty {
                guard body.write(text), body.flush() else { return nil }
            }
            if !fresh.isEmpty || page.anchor != cursor.anchor { cursor = Cursor(anchor: page.anchor, skip: 0) }
            if page.more { continue }
            while !watch.wait(for: Self.heartbeat) {
                guard body.write(": heartbeat\n\n"), body.flush() else { return nil }
            }
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
