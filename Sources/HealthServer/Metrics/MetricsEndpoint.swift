import Foundation
import HealthHTTP
import HealthPosix
import Synchronization

/// A small HTTP/1.1 responder for operators, without tokens (`--metrics-listen`): `GET /metrics` (Prometheus text
/// format), `GET /healthz` (the process is up) and `GET /readyz` (hkd accepts connections on its port and the
/// write-ahead log accepts changes; 503 otherwise). One request per connection (`Connection: close`), parsed by
/// the HTTP listener's parser (``HTTPRequestParser``): a request head over 8 KiB gets 431, a body 413, bytes that
/// are not HTTP/1.x 400, a method other than GET or HEAD 405, another path 404.
///
/// It starts before hkd recovers its data, on an event loop of its own, so that probes get through while hkd
/// starts (`/healthz` 200, `/readyz` and `/metrics` 503 "starting") and whatever the main loops are doing, and
/// serves the server's pages from ``serve(_:)`` on. Peers cannot starve it (``Limits``): every connection has a
/// deadline, connections still waiting for their request are capped with the oldest closed to make room, and
/// beyond a cap on all connections new ones get 503 at once. The page is rendered on its loop (it reads counters
/// and takes each shard's read lock briefly).
final class MetricsEndpoint: Sendable {
    /// What peers may hold of the endpoint.
    struct Limits: Sendable {
        /// Connections open at once; beyond it a new connection gets 503 and is closed.
        var maxConnections = 128
        /// Connections whose request head has not arrived yet; beyond it the oldest of them is closed, so that idle
        /// or slow peers cannot keep a probe out.
        var maxWaiting = 16
        /// From accept to the end of the exchange: the request head must arrive and the reply be read within it
        /// (Prometheus' default scrape timeout is 10 s too).
        var deadline: Duration = .seconds(10)
    }

    private let group: EventLoopGroup
    private let tcp: TCPServer
    private let target: MetricsTarget
    private let stopped = Atomic<Bool>(false)

    /// The port it listens on.
    var port: Int { tcp.port }

    /// Binds `host:port` and answers at once, on a loop of its own, as a server that is starting.
    init(host: String, port: Int, limits: Limits = Limits()) throws {
        let group = try EventLoopGroup(threads: 1, name: "hkd-metrics")
        let target = MetricsTarget(limits: limits)
        let refusal = HTTPResponder.response(
            status: "503 Service Unavailable", body: "too many connections to the metrics endpoint\n")
        do {
            tcp = try TCPServer.start(
                group: group,
                configuration: TCPServerConfiguration(
                    host: host, port: port, maxConnections: limits.maxConnections, refusalMessage: refusal)
            ) { connection in HTTPResponder(target: target, loop: connection.loop) }
        } catch {
            group.shutdown()
            throw error
        }
        self.group = group
        self.target = target
    }

    /// Serves `server`'s pages from now on: `/readyz` says ready (while its log accepts changes).
    func serve(_ server: HealthServer) { target.serve(server) }

    /// Stops accepting, closes every connection and joins the loop's thread. Idempotent; not from the loop.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        target.stop()
        tcp.stop()
        group.shutdown()
    }
}

/// What the metrics endpoint reports on, shared by its connections: hkd starting, the running server, or hkd
/// stopping; and the connections still waiting for their request. Thread-safe.
final class MetricsTarget: Sendable {
    /// Where hkd is.
    enum Status {
        /// Opening its data; its port refuses connections.
        case starting
        /// Accepting connections.
        case serving(HealthServer)
        case stopping
    }

    private struct State {
        var started = false
        var stopped = false
        weak var server: HealthServer?
    }

    let limits: MetricsEndpoint.Limits
    /// Connections whose request head has not arrived (the handshake quota's rule with no grace: the oldest goes).
    let waiting: HandshakeQuota
    private let state = Mutex(State())
    private let nextID = Atomic<UInt64>(1)

    init(limits: MetricsEndpoint.Limits) {
        self.limits = limits
        waiting = HandshakeQuota(limit: limits.maxWaiting, grace: .zero)
    }

    /// Where hkd is now.
    var status: Status {
        state.withLock { state in
            if state.stopped { return .stopping }
            guard state.started else { return .starting }
            return state.server.map { .serving($0) } ?? .stopping
        }
    }

    func serve(_ server: HealthServer) {
        state.withLock { state in
            state.started = true
            state.server = server
        }
    }

    func stop() { state.withLock { $0.stopped = true } }

    /// A fresh connection id, for ``waiting``.
    func makeID() -> UInt64 { nextID.add(1, ordering: .relaxed).oldValue }
}

/// One metrics connection: reads the request head, answers, closes; closed at the endpoint's deadline whatever
/// it is doing, and earlier when it waits for its request while newer connections need the room.
final class HTTPResponder: ConnectionHandler, Sendable {
    private struct State {
        let parser = HTTPRequestParser(limits: HTTPResponder.limits)
        /// Bytes received and not yet parsed.
        var received: [UInt8] = []
        /// Whether the connection counts against ``MetricsTarget/waiting``.
        var waiting = false
        var deadline: ScheduledTask?
    }

    private let target: MetricsTarget
    private let id: UInt64
    private let state: LoopBoundBox<State>

    /// A probe's request: a head of at most 8 KiB, no body.
    static let limits = HTTPRequestParser.Limits(maxHeaderBytes: 8 << 10, maxHeaderCount: 100, maxBodyBytes: 0)

    init(target: MetricsTarget, loop: EventLoop) {
        self.target = target
        id = target.makeID()
        state = LoopBoundBox(State(), loop: loop)
    }

    func connectionDidOpen(_ connection: Connection) {
        state.value.deadline = connection.loop.schedule(after: target.limits.deadline) { connection.close() }
        state.value.waiting = true
        let eviction = target.waiting.enter(id) { connection.close() }
        eviction?()
    }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        guard connection.isOpen else { return }
        state.value.received.append(contentsOf: bytes)
        let request: HTTPRequest
        do {
            let parser = state.value.parser
            let (parsed, used) = try state.value.received.withUnsafeBytes { try parser.parse($0) }
            state.value.received.removeFirst(used)
            guard let parsed else { return }
            request = parsed
        } catch {
            let failure = error as? HTTPParseError ?? HTTPParseError(status: 400, message: "\(error)")
            let status = "\(failure.status) \(HTTPResponse.reason(failure.status))"
            return respond(connection, status: status, body: failure.message + "\n")
        }
        let method = request.method
        let path = request.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        guard method == "GET" || method == "HEAD" else {
            return respond(
                connection, status: "405 Method Not Allowed", body: "only GET\n", extra: "Allow: GET, HEAD\r\n")
        }
        let omitBody = method == "HEAD"
        let status = target.status
        switch (path, status) {
        case ("/healthz", _):
            respond(connection, status: "200 OK", body: "ok\n", omitBody: omitBody)
        case ("/metrics", .serving(let server)):
            respond(
                connection, status: "200 OK", body: MetricsPage.render(server),
                contentType: "text/plain; version=0.0.4; charset=utf-8", omitBody: omitBody)
        case ("/readyz", .serving(let server)):
            if server.durable.acceptsChanges {
                respond(connection, status: "200 OK", body: "ready\n", omitBody: omitBody)
            } else {
                respond(
                    connection, status: "503 Service Unavailable",
                    body: "the write-ahead log does not accept changes (disk full or a failed fsync)\n",
                    omitBody: omitBody)
            }
        case ("/metrics", .starting), ("/readyz", .starting):
            respond(
                connection, status: "503 Service Unavailable",
                body: "starting: hkd is opening its data and does not accept connections yet\n", omitBody: omitBody)
        case ("/metrics", .stopping), ("/readyz", .stopping):
            respond(connection, status: "503 Service Unavailable", body: "stopping\n", omitBody: omitBody)
        default:
            respond(connection, status: "404 Not Found", body: "no such page; try /metrics, /healthz or /readyz\n")
        }
    }

    func connectionDidClose(_ connection: Connection, error: SystemError?) {
        state.value.deadline?.cancel()
        state.value.deadline = nil
        stopWaiting()
    }

    /// The request arrived (or will not): the connection no longer counts as waiting for it.
    private func stopWaiting() {
        guard state.value.waiting else { return }
        state.value.waiting = false
        target.waiting.leave(id)
    }

    private func respond(
        _ connection: Connection, status: String, body: String, contentType: String = "text/plain; charset=utf-8",
        extra: String = "", omitBody: Bool = false
    ) {
        stopWaiting()
        connection.write(
            Self.response(status: status, body: body, contentType: contentType, extra: extra, omitBody: omitBody))
        connection.closeAfterFlush()
    }

    /// A whole response that closes the connection.
    static func response(
        status: String, body: String, contentType: String = "text/plain; charset=utf-8", extra: String = "",
        omitBody: Bool = false
    ) -> [UInt8] {
        let bodyBytes = Array(body.utf8)
        let head =
            "HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\nContent-Length: \(bodyBytes.count)\r\n\(extra)"
            + "Connection: close\r\n\r\n"
        return Array(head.utf8) + (omitBody ? [] : bodyBytes)
    }
}
