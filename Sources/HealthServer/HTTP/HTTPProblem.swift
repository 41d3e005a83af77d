import Foundation
import HealthHTTP
import HealthModel

/// An error as the HTTP API answers it: RFC 9457 `application/problem+json`, with hkd's numeric code, its name
/// and whether retrying can help, and the HTTP status that matches the code.
public struct HTTPProblem: Sendable {
    public var status: Int
    public var title: String
    public var detail: String
    /// hkd's error code; `nil` for refusals of the HTTP layer itself (a malformed request).
    public var code: ErrorCode?

    public init(status: Int, title: String, detail: String, code: ErrorCode? = nil) {
        self.status = status
        self.title = title
        self.detail = detail
        self.code = code
    }

    /// The problem `error` is, at the status its code calls for.
    public init(_ error: HealthError) {
        self.init(status: Self.status(of: error.code), title: error.code.name, detail: error.message, code: error.code)
    }

    /// A 400 for a request the API cannot take as it is.
    public static func badRequest(_ detail: String) -> HTTPProblem {
        HTTPProblem(status: 400, title: "Bad Request", detail: detail)
    }

    /// 404 for no data, 400 for other bad input, 401 for a missing, wrong or revoked token, 403 for a missing
    /// grant, 413 for a batch over the limit, 429 when the server is busy, 503 for other states a retry can
    /// outlast, 500 otherwise.
    static func status(of code: ErrorCode) -> Int {
        switch code {
        case .noData: 404
        case .batchTooLarge: 413
        case .unauthenticated, .tokenRevoked: 401
        case .forbidden: 403
        case .busy, .tooManyConnections: 429
        case .internalError: 500
        default:
            switch code.rawValue {
            case 100..<300: 400
            case 400..<500: 503
            default: 500
            }
        }
    }

    /// The response: the problem document, with `Retry-After` when a retry can help and `WWW-Authenticate` for
    /// 401.
    public var response: HTTPResponse {
        var fields: [(String, String)] = [
            ("type", JSONString.quoted("about:blank")), ("title", JSONString.quoted(title)),
            ("status", String(status)), ("detail", JSONString.quoted(detail)),
        ]
        if let code {
            fields += [
                ("code", String(code.rawValue)), ("name", JSONString.quoted(code.name)),
                ("retryable", code.isRetryable ? "true" : "false"),
            ]
        }
        let body = "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n"
        var headers: [(name: String, value: String)] = []
        if code?.isRetryable == true { headers.append(("Retry-After", "1")) }
        if status == 401 { headers.append(("WWW-Authenticate", "Bearer realm=\"hkd\"")) }
        return HTTPResponse(status: status, contentType: "application/problem+json", body, headers: headers)
    }
}
