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
/// answers as over the binary protocol. Errors are RFC 9457 problem documents carrying hkd's error code.
public struct HealthAPI: HTTPService {
    public init() {}

    public func respond(to request: HTTPRequest, peer: String, server: HealthServer) -> HTTPResponse {
        guard let segments = request.pathSegments, let query = request.queryItems else {
            return HTTPProblem.badRequest("the request target is not valid percent-encoded UTF-8").response
        }
        guard let matched = APIRoute.match(segments, method: request.method) else {
            return HTTPProblem(
                status: 404, title: "Not Found",
                detail: "no resource \(segments.joined(separator: "/")); see Protocol/openapi.yaml"
            ).response
        }
        let match: APIRoute.Match
        switch matched {
        case .success(let found):
            match = found
        case .failure(let wrong):
            let allowed = wrong.allowed.flatMap { $0 == "GET" ? ["GET", "HEAD"] : [$0] }.joined(separator: ", ")
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
        let format: OutputFormat = Self.wantsCSV(request.header("Accept")) ? .csv : .json
        let arguments: [String]
        do {
            let given = query + Self.inputFormat(request.header("Content-Type"), route: match.route)
            arguments = try match.route.arguments(match, query: given, format: format)
        } catch {
            return HTTPProblem.badRequest(error.message).response
        }
        var (response, next) = Self.run(
            arguments, for: identity, on: server, input: match.route.method == "POST" ? request.body : nil)
        if let next { response.headers.append(("Link", Self.nextPageLink(request.target, token: next))) }
        if request.method == "HEAD" { response.body = [] }
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

    /// Whether `accept` prefers hkq's CSV (`text/csv`) to its JSON.
    static func wantsCSV(_ accept: String?) -> Bool {
        guard let accept else { return false }
        return accept.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).hasPrefix("text/csv") == true
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

    /// Runs hkq with `arguments` on this thread, its requests answered by `server` as `identity`, `-` reading
    /// `input`; with the response, the next page's token when a limit cut the listing (hkq's hint on standard
    /// error, which a successful response leaves out, handed over as a value).
    static func run(
        _ arguments: [String], for identity: ClientIdentity, on server: HealthServer, input: [UInt8]? = nil
    ) -> (HTTPResponse, next: PageToken?) {
        var program = HKQ.standard
        program.ownsThread = true
        program.standardInput = input
        program.inProcessClient = {
            HealthClient(answeredBy: { server.answer($0, as: identity) }, welcome: server.welcome(for: identity))
        }
        let out = CapturedText()
        let err = CapturedText()
        let next = Mutex<PageToken?>(nil)
        let console = Console(out: out, err: err, nextPage: { token in next.withLock { $0 = token } })
        let outcome = Mutex<(any Error)??>(nil)
        let executor = ThreadExecutor()
        Task(executorPreference: executor) { [program] in
            do {
                try await program.execute(arguments: arguments, environment: [:], console: console)
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
            executor.stop()
        }
        executor.run()
        guard case .some(let failure) = outcome.withLock({ $0 }), let failure else {
            let csv = arguments.contains("csv")
            let response = HTTPResponse(
                status: 200, contentType: csv ? "text/csv; charset=utf-8" : "application/json", out.text)
            return (response, next.withLock { $0 })
        }
        return (problem(failure, standardError: err.text), nil)
    }

    /// The problem document of a command's failure; `standardError` is what it wrote there.
    static func problem(_ failure: any Error, standardError: String) -> HTTPResponse {
        switch failure {
        case let error as HealthError:
            return HTTPProblem(error).response
        case let error as UsageError:
            return HTTPProblem.badRequest(error.message).response
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
