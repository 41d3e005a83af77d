import HealthHTTP

/// What answers the requests of hkd's HTTP listener (`--http-listen`): the HTTP/JSON API. Called on a worker
/// thread, one request at a time per connection; it may block (it asks the store).
public protocol HTTPService: Sendable {
    /// The response to `request` from a peer at `peer`, served by `server`.
    func respond(to request: HTTPRequest, peer: String, server: HealthServer) -> HTTPResponse
}

/// How long an HTTP peer may take, and how much it may send.
struct HTTPLimits: Sendable {
    /// From a request's first byte to its last.
    var requestDeadline: Duration = .seconds(30)
    /// Between requests on a kept-alive connection (and before the first).
    var idleDeadline: Duration = .seconds(60)
    var parser = HTTPRequestParser.Limits()
}
