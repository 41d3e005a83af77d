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
        guard let match = APIRoute.match(segments) else {
            return HTTPProblem(
                status: 404, title: "Not Found",
                detail: "no resource \(segments.joined(separator: "/")); see Protocol/openapi.yaml"
            ).response
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPProblem(
                status: 405, title: "Method Not Allowed", detail: "\(request.method) is not served here; use GET"
            ).response
            response.headers.append(("Allow", "GET, HEAD"))
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
            arguments = try match.route.arguments(match, query: query, format: format)
        } catch {
            return HTTPProblem.badRequest(error.message).response
        }
        var response = Self.run(arguments, for: identity, on: server)
        if request.method == "HEAD" { response.body = [] }
        return response
    }

    /// Whether `accept` prefers hkq's CSV (`text/csv`) to its JSON.
    static func wantsCSV(_ accept: String?) -> Bool {
        guard let accept else { return false }
        return accept.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).hasPrefix("text/csv") == true
    }

    /// Runs hkq with `arguments` on this thread, its requests answered by `server` as `identity`.
    static func run(_ arguments: [String], for identity: ClientIdentity, on server: HealthServer) -> HTTPResponse {
        var program = HKQ.standard
        program.ownsThread = true
        program.inProcessClient = {
            HealthClient(answeredBy: { server.answer($0, as: identity) }, welcome: server.welcome(for: identity))
        }
        let out = CapturedText()
        let err = CapturedText()
        let outcome = Mutex<(any Error)??>(nil)
        let executor = ThreadExecutor()
        Task(executorPreference: executor) { [program] in
            do {
                try await program.execute(
                    arguments: arguments, environment: [:], console: Console(out: out, err: err))
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
            executor.stop()
        }
        executor.run()
        guard case .some(let failure) = outcome.withLock({ $0 }), let failure else {
            let csv = arguments.contains("csv")
            return HTTPResponse(
                status: 200, contentType: csv ? "text/csv; charset=utf-8" : "application/json", out.text)
        }
        switch failure {
        case let error as HealthError:
            return HTTPProblem(error).response
        case let error as UsageError:
            return HTTPProblem.badRequest(error.message).response
        case let exit as CommandExit:
            // The command said why on its standard error.
            let detail = err.text.trimmingCharacters(in: .whitespacesAndNewlines)
            return exit.status == .noData
                ? HTTPProblem(HealthError(.noData, detail)).response
                : HTTPProblem(status: 400, title: "Bad Request", detail: detail).response
        default:
            return HTTPProblem(HealthError(.internalError, "\(failure)")).response
        }
    }
}
