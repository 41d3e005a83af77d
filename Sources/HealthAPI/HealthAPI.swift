import HKQKit
import HealthClient
import HealthHTTP
import HealthModel
import HealthPosix
import HealthServer
import HealthWire
import Synchronization

/// hkd's HTTP/JSON API (`--http-listen`): each resource under `/v1` runs the hkq query command of the same name
/// in process, with hkq's option names as query parameters, so its JSON (and with `Accept: text/csv` its CSV) is
/// hkq's byte for byte (docs/OUTPUT.md is the one contract for both). The command's requests go to the server's
/// own request handlers as the caller's identity (``HealthServer/answer(_:as:)``): the same checks, grants and
/// answers as over the binary protocol. Errors are RFC 9457 problem documents carrying hkd's error code. `/` and
/// `/ui/…` serve the ``Dashboard``, a page in the browser that reads `/v1` like any other client.
public struct HealthAPI: HTTPService {
    public init() {}

    public func respond(to request: HTTPRequest, peer: String, server: HealthServer) -> HTTPResponse {
        let cors = CORSPolicy(origins: Set(server.configuration.httpCORS))
        var response = answer(request, server: server, cors: cors)
        cors.decorate(&response, for: request)
        return response
    }

    /// The response to `request`, before CORS headers.
    private func answer(_ request: HTTPRequest, server: HealthServer, cors: CORSPolicy) -> HTTPResponse {
        guard let segments = request.pathSegments, var query = request.queryItems else {
            return HTTPProblem.badRequest("the request target is not valid percent-encoded UTF-8").response
        }
        if let page = Dashboard(server.configuration).response(to: request, segments: segments) { return page }
        if segments.count == 4, segments[0] == "v1", segments[1] == "subjects", segments[3] == "events",
            request.method == "GET" || request.method == "HEAD"
        {
            do {
                let identity = try server.identity(authorization: request.header("Authorization"))
                if let owner = server.httpOwner(of: segments[2]) {
                    return HTTPResponse(status: 307, headers: [("Location", owner + request.target)])
                }
                return EventStream.response(
                    subject: segments[2], query: query, lastEventID: request.header("Last-Event-ID"),
                    identity: identity, server: server, target: request.target)
            } catch {
                return HTTPProblem(error).response
            }
        }
        guard let matched = APIRoute.match(segments, method: request.method) else {
            return HTTPProblem(
                status: 404, title: "Not Found",
                detail: "no resource \(segments.joined(separator: "/")); see Protocol/openapi.yaml"
            ).response
        }
        if request.method == "OPTIONS", cors.isOn {
            return cors.preflight(request, methods: Self.allowed(APIRoute.matches(segments).map(\.route.method)))
        }
        let match: APIRoute.Match
        switch matched {
        case .success(let found):
            match = found
        case .failure(let wrong):
            let allowed = Self.allowed(wrong.allowed).joined(separator: ", ")
            var response = HTTPProblem(
                status: 405, title: "Method Not Allowed", detail: "\(request.method) is not served here; use \(allowed)"
            ).response
            response.headers.append(("Allow", allowed))
            return response
        }
        let identity: ClientIdentity
        do {
            identity = try server.identity(authorization: request.header("Authorization"))
        } catch {
            return HTTPProblem(error).response
        }
        // Then placement, as on the binary protocol (after the handshake): another node's subject is served there.
        if let subject = match.subject, let owner = server.httpOwner(of: subject) {
            return HTTPResponse(status: 307, headers: [("Location", owner + request.target)])
        }
        if match.route.method == "POST", request.body.isEmpty {
            return HTTPProblem.badRequest(
                "the body is empty: send samples as CSV (text/csv) or JSON lines (application/x-ndjson)"
            ).response
        }
        var format = Self.outputFormat(request.header("Accept"), route: match.route)
        if let document = match.route.document {
            let asked = query.contains { $0.name == document.option }
            if asked || Self.firstMediaType(request.header("Accept")).hasPrefix(document.mediaType) {
                if !asked { query.append((document.option, "")) }
                format = .document(document.mediaType)
            }
        }
        let arguments: [String]
        do {
            let headers =
                Self.inputFormat(request.header("Content-Type"), route: match.route)
                + (try Self.idempotencyKey(request.header("Idempotency-Key"), route: match.route))
            arguments = try match.route.arguments(match, query: query, headers: headers, format: format.option)
        } catch {
            return HTTPProblem.badRequest(error.message).response
        }
        if match.route.method == "POST" {
            return Self.run(arguments, for: identity, on: server, format: format, input: request.body)
        }
        var response = HTTPResponse(status: 200, headers: [("Content-Type", format.mediaType)])
        if query.contains(where: { $0.name == "limit" && !["", "0"].contains($0.value) }) {
            // A listing a limit may cut is made whole first, so that the link to its next page leads the body.
            let target = request.target
            response.producer = HTTPBodyProducer { body in
                let out = CapturedText()
                let next = Mutex<PageToken?>(nil)
                let nextPage: @Sendable (PageToken) -> Void = { token in next.withLock { $0 = token } }
                if let failure = Self.run(arguments, for: identity, on: server, out: out, nextPage: nextPage) {
                    return failure
                }
                if let token = next.withLock({ $0 }) {
                    _ = body.addHeader("Link", Self.nextPageLink(target, token: token))
                }
                _ = body.write(out.text)
                return nil
            }
            return response
        }
        // The rest streams: hkq's output is the body as hkq writes it (see HTTPBodyProducer).
        response.producer = HTTPBodyProducer { body in
            let sink = BodySink(body)
            return Self.run(arguments, for: identity, on: server, out: sink, started: sink.attach)
        }
        return response
    }

    /// RFC 8288's `Link` to the next page: the request's own target with its `after` parameter replaced by
    /// `token` (its text is base64url, safe in a query as it is), every other parameter as the client wrote it.
    static func nextPageLink(_ target: String, token: PageToken) -> String {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query = parts.count == 2 ? parts[1].split(separator: "&").map(String.init) : []
        query.removeAll { HTTPRequest.percentDecoded($0.prefix { $0 != "=" }, plusIsSpace: true) == "after" }
        query.append("after=" + token.text)
        return "<\(parts[0])?\(query.joined(separator: "&"))>; rel=\"next\""
    }

    /// The methods a path's routes serve, with `HEAD` after `GET`.
    static func allowed(_ methods: [String]) -> [String] {
        methods.flatMap { $0 == "GET" ? ["GET", "HEAD"] : [$0] }
    }

    /// The body's format an `Accept` header asks for by its first media type: hkq's CSV for `text/csv`, its
    /// NDJSON for `application/x-ndjson` (listings), else its JSON.
    enum BodyFormat {
        case json, csv, ndjson
        /// A route's document of this media type (``APIRoute/document``).
        case document(String)

        /// hkq's `--format` value (a document's switch decides what it prints).
        var option: String {
            switch self {
            case .json, .document: "json"
            case .csv: "csv"
            case .ndjson: "ndjson"
            }
        }

        /// The response's `Content-Type`.
        var mediaType: String {
            switch self {
            case .json: "application/json"
            case .csv: "text/csv; charset=utf-8"
            case .ndjson: "application/x-ndjson"
            case .document(let type): type
            }
        }
    }

    /// The first media type `accept` names, lowercased ("" without one).
    static func firstMediaType(_ accept: String?) -> String {
        accept?.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    }

    /// The format `accept` asks for (see ``BodyFormat``); JSON for CSV where `route` prints no CSV.
    static func outputFormat(_ accept: String?, route: APIRoute) -> BodyFormat {
        let first = firstMediaType(accept)
        if first.hasPrefix("text/csv") { return route.printsCSV ? .csv : .json }
        if first.hasPrefix("application/x-ndjson") { return .ndjson }
        return .json
    }

    /// `hkq insert`'s `--input-format` for a body's media type: CSV, JSON lines, or (another) found from the body.
    static func inputFormat(_ contentType: String?, route: APIRoute) -> [(name: String, value: String)] {
        guard route.method == "POST", let type = contentType?.split(separator: ";").first?.lowercased() else {
            return []
        }
        switch type.trimmingCharacters(in: .whitespaces) {
        case "text/csv": return [("input-format", "csv")]
        case "application/x-ndjson", "application/jsonl", "application/jsonlines": return [("input-format", "jsonl")]
        default: return []
        }
    }

    /// `hkq insert`'s `--idempotency-key` for an `Idempotency-Key` header on a `POST`. `PUT` and `DELETE` take
    /// the header, checked by the same rules, and need nothing more: they set a state, so sending one again changes
    /// nothing (a repeated `DELETE` answers `"deleted":0`).
    static func idempotencyKey(_ header: String?, route: APIRoute) throws(UsageError) -> [(name: String, value: String)]
    {
        guard let header, route.method != "GET" else { return [] }
        guard case .success(let key) = IdempotencyKey.parse(header) else {
            throw UsageError(
                "Idempotency-Key takes 1 to \(IdempotencyKey.maxLength) characters of visible ASCII (! to ~)")
        }
        return route.method == "POST" ? [("idempotency-key", key.text)] : []
    }

    /// Runs hkq with `arguments` on this thread, its requests answered by `server` as `identity`, `-` reading
    /// `input`: the whole response, in `format`.
    static func run(
        _ arguments: [String], for identity: ClientIdentity, on server: HealthServer, format: BodyFormat,
        input: [UInt8]? = nil
    ) -> HTTPResponse {
        let out = CapturedText()
        if let failure = run(arguments, for: identity, on: server, input: input, out: out) { return failure }
        return HTTPResponse(status: 200, contentType: format.mediaType, out.text)
    }

    /// Runs hkq with `arguments` on this thread, printing to `out`, its requests answered by `server` as
    /// `identity`, `-` reading `input`; `nextPage` is handed the token of a listing a limit cut, `started` the
    /// command's task (to cancel it). Returns `nil` when the command succeeded, else the problem to answer with.
    static func run(
        _ arguments: [String], for identity: ClientIdentity, on server: HealthServer, input: [UInt8]? = nil,
        out: any TextSink, nextPage: (@Sendable (PageToken) -> Void)? = nil,
        started: (Task<Void, Never>) -> Void = { _ in }
    ) -> HTTPResponse? {
        var program = HKQ.standard
        program.ownsThread = true
        program.standardInput = input
        program.inProcessClient = {
            HealthClient(answeredBy: { server.answer($0, as: identity) }, welcome: server.welcome(for: identity))
        }
        let err = CapturedText()
        let console = Console(out: out, err: err, nextPage: nextPage)
        let outcome = Mutex<(any Error)??>(nil)
        let executor = ThreadExecutor()
        let task = Task(executorPreference: executor) { [program] in
            do {
                try await program.execute(arguments: arguments, environment: [:], console: console)
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
            executor.stop()
        }
        started(task)
        executor.run()
        guard case .some(let failure) = outcome.withLock({ $0 }), let failure else { return nil }
        return problem(failure, standardError: err.text)
    }

    /// The problem document of a command's failure; `standardError` is what it wrote there.
    static func problem(_ failure: any Error, standardError: String) -> HTTPResponse {
        switch failure {
        case let error as HealthError:
            return HTTPProblem(error).response
        case let error as HealthClientError:
            // A command that calls the client itself (sources) passes the server's error on as it came.
            return HTTPProblem(error.error).response
        case let error as UsageError:
            return HTTPProblem.badRequest(error.message).response
        case let error as ImportError:
            // A body that cannot be read on (a column no format defines, say).
            return HTTPProblem.badRequest(error.description).response
        case let exit as CommandExit:
            // The command said why on its standard error.
            let detail = standardError.trimmingCharacters(in: .whitespacesAndNewlines)
            switch exit.status {
            case .noData: return HTTPProblem(HealthError(.noData, detail)).response
            case .partialImport:
                // Some rows were stored: the detail names the others, line by line.
                return HTTPProblem(status: 422, title: "Unprocessable Content", detail: detail).response
            default: return HTTPProblem(status: 400, title: "Bad Request", detail: detail).response
            }
        default:
            return HTTPProblem(HealthError(.internalError, "\(failure)")).response
        }
    }
}

/// hkq's standard output as a streamed response body: each write goes to the body's writer (which holds it back
/// while the client is slow); once the client has gone, the command's task is cancelled so it stops.
final class BodySink: TextSink {
    private let body: any HTTPBodyWriter
    private let state = Mutex<(task: Task<Void, Never>?, gone: Bool)>((nil, false))

    init(_ body: any HTTPBodyWriter) { self.body = body }

    /// The task of the command writing here, cancelled when the client goes.
    func attach(_ task: Task<Void, Never>) {
        let gone = state.withLock { state in
            state.task = task
            return state.gone
        }
        if gone { task.cancel() }
    }

    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    func write(bytes: UnsafeRawBufferPointer) {
        guard !body.write(bytes) else { return }
        let task = state.withLock { state in
            state.gone = true
            return state.task
        }
        task?.cancel()
    }
}
