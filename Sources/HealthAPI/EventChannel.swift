import HKQKit
import HealthHTTP
import HealthModel
import HealthServer

/// What every server-sent event stream of the API shares: the `retry` field before the first event, a comment
/// every ``EventStream/heartbeat`` while nothing changes, and the last event, `end`, that says why the stream
/// ends while the client still reads (the server stops, the subject's partition moved): after it the body ends
/// with its last chunk, and an EventSource client reconnects (here, and is sent to the subject's new owner).
struct EventChannel {
    let body: any HTTPBodyWriter
    /// The request's target, which the `end` event's `location` gives on the new owner.
    let target: String
    /// Whether the body has begun (before that a failure is answered as a problem instead).
    private(set) var started = false

    init(body: any HTTPBodyWriter, target: String) {
        self.body = body
        self.target = target
    }

    /// Sends `events` (whole events, each ending with a blank line; empty to send just the response head), after
    /// the `retry` field the first time; false once the client has gone.
    mutating func send(_ events: String) -> Bool {
        let text = started ? events : "retry: 1000\n\n" + events
        started = true
        return body.write(text) && body.flush()
    }

    /// Waits for the next change `watch` reports, sending a heartbeat comment each ``EventStream/heartbeat``
    /// meanwhile: the places of the types that changed, or `nil` when the stream is over (the client left, or the
    /// stream had to end and its `end` event was sent).
    mutating func next(_ watch: ChangeWatch) -> Set<Int>? {
        while true {
            switch watch.wait(for: EventStream.heartbeat) {
            case .changed(let types): return types
            case .quiet: guard send(": heartbeat\n\n") else { return nil }
            case .end(let end):
                _ = self.end(end)
                return nil
            }
        }
    }

    /// Sends the `end` event for `end`: `data` is `{"reason","detail"}` and, for a moved partition whose new
    /// owner is known, `"location"`, this request's URL there. Returns what the producer returns: nothing.
    mutating func end(_ end: StreamEnd) -> HTTPResponse? {
        var fields: [(String, JSONValue)] = [("reason", .string(end.reason)), ("detail", .string(end.detail))]
        if let owner = end.owner { fields.append(("location", .string(owner + target))) }
        _ = send("event: end\ndata: \(JSONValue.object(fields).rendered)\n\n")
        return nil
    }

    /// The outcome of a query that failed while the stream runs: the problem answered when nothing was sent yet;
    /// once the body began, the `end` event when this node no longer serves `subject` (the client reconnects to
    /// the new owner), else the problem (the body is cut off without its last chunk).
    mutating func failed(_ problem: HTTPResponse, subject: String, server: HealthServer) -> HTTPResponse? {
        guard started else { return problem }
        if let end = server.streamEnd(for: subject) { return self.end(end) }
        return problem
    }
}
