import HKQKit
import HealthHTTP
import HealthModel
import HealthServer
import HealthWire

/// `GET /v1/subjects/{subject}/events?type=TYPE&collection`: a statistics collection kept current, as server-sent
/// events, the HTTP form of `hkq watch --collection` (a live collection over the binary protocol).
///
/// The parameters besides `type`, `collection` and `anchor` are those of `GET …/collection`, read as
/// `hkq collection` reads them (``HKQ/collectionPlan(arguments:)``); the buckets are computed as a collection
/// subscription computes them (``CollectionFeed``, steps shared with the subscriptions of the same query), and
/// each is the JSON object `…/collection` answers for it (docs/OUTPUT.md). Two kinds of event, each with the
/// change anchor its buckets are current at as its `id`:
///
/// - `snapshot`: `data` is the JSON array of every bucket (as `…/collection` answers it, on one line): replace
///   the table. Sent first, and instead of `buckets` when the stream resumes from an anchor this server cannot
///   resume from (expired past the deletion retention, or newer than any change it knows).
/// - `buckets`: `data` is the JSON array of the buckets changes touched, recomputed: replace these (by `start`);
///   a bucket whose figures are all `null` has no data any more.
///
/// A client reconnecting with `Last-Event-ID` (or `anchor=ID`) gets one `buckets` event with every bucket that
/// changed since, then the changes as they come. Computations of one stream start at most every
/// ``minimumInterval`` (changes meanwhile coalesce), as for a collection subscription.
enum CollectionEvents {
    /// Least time between the starts of two computations of one stream.
    static let minimumInterval: Duration = .milliseconds(50)

    /// The stream for a request, or the problem with it.
    static func response(
        subject: String, query: [(name: String, value: String)], lastEventID: String?, identity: ClientIdentity,
        server: HealthServer, target: String
    ) -> HTTPResponse {
        var parameters: [(name: String, value: String)] = []
        var anchor: String?
        var types = 0
        for (name, value) in query {
            switch name {
            case "collection":
                guard value.isEmpty || value == "true" else {
                    return HTTPProblem.badRequest("collection is a switch: give it no value (or true)").response
                }
            case "anchor": anchor = value
            case "type":
                types += value.split(separator: ",", omittingEmptySubsequences: false).count
                parameters.append((name, value))
            default: parameters.append((name, value))
            }
        }
        guard types == 1 else {
            return HTTPProblem.badRequest("a collection stream follows one type: name exactly one").response
        }
        let resume = lastEventID ?? anchor
        let start: UInt64?
        if let resume {
            guard let value = UInt64(resume) else {
                return HTTPProblem.badRequest(
                    "the anchor or Last-Event-ID \(resume) is not the id of a collection event (a change anchor)"
                ).response
            }
            start = value == 0 ? nil : value
        } else {
            start = nil
        }
        let plan: CollectionPlan
        do {
            let route = APIRoute.all.first { $0.command == ["collection"] }!
            let arguments = try route.arguments(
                APIRoute.Match(route: route, subject: subject, pathArguments: []), query: parameters, format: "json")
            plan = try HKQ.standard.collectionPlan(arguments: arguments)
        } catch {
            return HealthAPI.problem(error, standardError: "")
        }
        let type: QuantityType
        do {
            type = try QuantityType.named(plan.query.type)
        } catch {
            return HealthAPI.problem(error, standardError: "")
        }
        let feed = server.collectionFeed(plan.query, as: identity)
        return EventStream.eventStream { body in
            run(feed, plan: plan, type: type, from: start, subject: subject, server: server, target: target, into: body)
        }
    }

    /// Writes the events until the client leaves, the stream must end (the server stops, this node stops serving
    /// the subject), or a computation fails.
    static func run(
        _ feed: CollectionFeed, plan: CollectionPlan, type: QuantityType, from start: UInt64?, subject: String,
        server: HealthServer, target: String, into body: any HTTPBodyWriter
    ) -> HTTPResponse? {
        // Watching before the first computation: a change after the anchor it reads wakes the next one.
        let watch = server.watchChanges(subject: subject, types: [type])
        defer { watch.close() }
        body.onClientGone { watch.end(.clientGone) }
        var channel = EventChannel(body: body, target: target)
        var anchor = start
        while true {
            let began = ContinuousClock.now
            let step: CollectionFeed.Step
            do {
                step = try anchor.map(feed.changes(after:)) ?? feed.snapshot()
            } catch {
                return channel.failed(HealthAPI.problem(error, standardError: ""), subject: subject, server: server)
            }
            anchor = step.anchor
            if step.replacesAll || !step.buckets.isEmpty || !channel.started {
                guard channel.send(event(step, plan: plan)) else { return nil }
            }
            if step.more { continue }
            guard channel.next(watch) != nil else { return nil }
            watch.pause(for: began + minimumInterval - ContinuousClock.now)
        }
    }

    /// The event of a step (see ``CollectionEvents``); empty for a step that changed no bucket.
    static func event(_ step: CollectionFeed.Step, plan: CollectionPlan) -> String {
        guard step.replacesAll || !step.buckets.isEmpty else { return "" }
        let buckets = plan.jsonArray(CollectionResult(unit: step.unit, buckets: step.buckets))
        let name = step.replacesAll ? "snapshot" : "buckets"
        return "event: \(name)\nid: \(step.anchor)\ndata: \(buckets)\n\n"
    }
}
