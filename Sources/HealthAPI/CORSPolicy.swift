import HealthHTTP
import HealthModel
import HealthServer

/// Cross-origin requests from web pages (`hkd --http-cors ORIGIN`): off unless origins are named. Then a
/// response to a request whose `Origin` is one of them names that origin in `Access-Control-Allow-Origin`
/// (never `*`), and a preflight `OPTIONS` from it is answered with the path's methods and the request headers the
/// API reads. Tokens travel in `Authorization` and no cookies are used, so credentials are never allowed.
struct CORSPolicy: Sendable {
    /// The origins allowed, in lower case (``ServerConfiguration/parseOrigin(_:origin:)``).
    let origins: Set<String>

    /// Request headers a page may send: the token, the body's type, the answer's format, the idempotency key.
    static let allowedHeaders = "Authorization, Content-Type, Accept, Idempotency-Key"
    /// Response headers a page may read besides the safelisted ones.
    static let exposedHeaders = "Location, Retry-After, WWW-Authenticate"
    /// How long a browser may reuse a preflight's answer, in seconds.
    static let maxAge = 600

    /// Whether any origin is allowed.
    var isOn: Bool { !origins.isEmpty }

    /// The allowed origin `request` comes from, if it names one.
    func allowedOrigin(of request: HTTPRequest) -> String? {
        guard let origin = request.header("Origin")?.lowercased(), origins.contains(origin) else { return nil }
        return origin
    }

    /// The answer to a preflight `OPTIONS` for a path served with `methods`: 200 with the methods and headers for
    /// an allowed origin (``decorate(_:for:)`` adds the origin), a 403 problem for any other.
    func preflight(_ request: HTTPRequest, methods: [String]) -> HTTPResponse {
        guard allowedOrigin(of: request) != nil else {
            let origin = request.header("Origin").map { "\"\($0)\"" } ?? "no origin"
            return HTTPProblem(
                status: 403, title: "Forbidden",
                detail: "\(origin) is not an origin hkd serves cross-origin requests to (hkd --http-cors)"
            ).response
        }
        return HTTPResponse(
            status: 200,
            headers: [
                ("Access-Control-Allow-Methods", methods.joined(separator: ", ")),
                ("Access-Control-Allow-Headers", Self.allowedHeaders),
                ("Access-Control-Max-Age", String(Self.maxAge)),
            ])
    }

    /// Adds the CORS headers to `response`: with CORS on, `Vary: Origin`, and for an allowed origin the origin
    /// and the readable headers.
    func decorate(_ response: inout HTTPResponse, for request: HTTPRequest) {
        guard isOn else { return }
        response.vary(on: "Origin")
        guard let origin = allowedOrigin(of: request) else { return }
        response.headers.append(("Access-Control-Allow-Origin", origin))
        response.headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
    }
}
