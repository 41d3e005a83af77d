import HealthHTTP
import HealthModel
import HealthPosix

/// One connection of the HTTP listener: parses requests with ``HTTPRequestParser``, answers them one at a time
/// on a worker through the ``HTTPService``, and keeps the connection alive while the client asks. A request must
/// arrive whole within ``HTTPLimits/requestDeadline`` of its first byte, and an idle connection closes after
/// ``HTTPLimits/idleDeadline``; a request over the parser's caps, or bytes that are not HTTP/1.x, get their
/// status and the connection closes. A 401 is sent after the server's ``FailureThrottle`` delay for the address.
/// A response with a ``HTTPBodyProducer`` is written by its producer on a thread of its own (`hkd-http-body`)
/// through an ``HTTPBodyStream``, gzip-compressed when the client accepts it; meanwhile the connection is read
/// (what arrives is kept, up to the header cap, for after the response) so that a client that leaves stops it.
final class HTTPConnectionHandler: ConnectionHandler, Sendable {
    private struct State {
        let parser: HTTPRequestParser
        /// Bytes received and not yet parsed (pipelined requests wait here while one is served).
        var buffer: [UInt8] = []
        /// Whether a request is being served (reading is paused meanwhile).
        var serving = false
        var deadline: ScheduledTask?
        /// The streamed response being written, if any.
        var stream: HTTPBodyStream?
    }

    private let server: HealthServer
    private let service: any HTTPService
    private let limits: HTTPLimits
    private let state: LoopBoundBox<State>

    init(server: HealthServer, service: any HTTPService, limits: HTTPLimits, loop: EventLoop) {
        self.server = server
        self.service = service
        self.limits = limits
        state = LoopBoundBox(State(parser: HTTPRequestParser(limits: limits.parser)), loop: loop)
    }

    func connectionDidOpen(_ connection: Connection) { arm(connection, after: limits.idleDeadline) }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        state.value.buffer.append(contentsOf: bytes)
        // While a body streams, reading goes on only to notice the client leaving (an event stream may write
        // nothing for a while): what it sends meanwhile (a pipelined request) waits, up to the header cap.
        if state.value.stream != nil, state.value.buffer.count > limits.parser.maxHeaderBytes {
            connection.pauseReading()
        }
        parseNext(connection)
    }

    func connection(_ connection: Connection, writabilityChanged isWritable: Bool) {
        state.value.stream?.writabilityChanged(isWritable)
    }

    func connectionDidClose(_ connection: Connection, error: SystemError?) {
        state.value.deadline?.cancel()
        state.value.deadline = nil
        state.value.stream?.clientGone()
        state.value.stream = nil
    }

    /// Parses the buffered bytes up to the next whole request and serves it; waits for more bytes otherwise.
    private func parseNext(_ connection: Connection) {
        guard connection.isOpen, !state.value.serving else { return }
        let wasInside = state.value.parser.isInsideRequest
        let parsed: HTTPRequest?
        do {
            let parser = state.value.parser
            let (request, used) = try state.value.buffer.withUnsafeBytes { try parser.parse($0) }
            state.value.buffer.removeFirst(used)
            parsed = request
        } catch {
            let failure = error as? HTTPParseError ?? HTTPParseError(status: 400, message: "\(error)")
            let problem = HTTPProblem(
                status: failure.status, title: HTTPResponse.reason(failure.status), detail: failure.message)
            connection.write(problem.response.serialized(keepAlive: false))
            connection.closeAfterFlush()
            return
        }
        guard let request = parsed else {
            if state.value.parser.isInsideRequest, !wasInside { arm(connection, after: limits.requestDeadline) }
            return
        }
        serve(request, on: connection)
    }

    private func serve(_ request: HTTPRequest, on connection: Connection) {
        state.value.serving = true
        state.value.deadline?.cancel()
        state.value.deadline = nil
        connection.pauseReading()
        let (server, service, loop) = (server, service, connection.loop)
        let peer = connection.remoteAddress.host
        let accepted = server.workers.submit { [self] in
            let response = service.respond(to: request, peer: peer, server: server)
            if let producer = response.producer {
                if (200..<300).contains(response.status) { server.failures.succeeded(peer) }
                _ = loop.execute { self.stream(response, producer, for: request, on: connection) }
                return
            }
            let bytes = response.serialized(keepAlive: request.keepAlive, sendsBody: request.method != "HEAD")
            // Bad tokens are answered later and later, as refused handshakes are (the same throttle, by address);
            // only an answer that needed a good token forgets the address's failures.
            let delay: Duration
            if response.status == 401 {
                delay = server.failures.failed(peer)
            } else {
                if (200..<300).contains(response.status) { server.failures.succeeded(peer) }
                delay = .zero
            }
            _ = loop.execute {
                guard delay > .zero else { return self.finish(bytes, keepAlive: request.keepAlive, on: connection) }
                _ = loop.schedule(after: delay) { self.finish(bytes, keepAlive: request.keepAlive, on: connection) }
            }
        }
        if !accepted {
            let busy = HTTPProblem(
                HealthError(.busy, "the server is busy (worker queue full); retry later"))
            finish(busy.response.serialized(keepAlive: false), keepAlive: false, on: connection)
        }
    }

    /// Starts `producer` on a thread of its own, writing `response`'s body through an ``HTTPBodyStream``; for
    /// `HEAD`, sends the head alone (neither length nor chunks: the body is not made) and runs nothing.
    private func stream(
        _ response: HTTPResponse, _ producer: HTTPBodyProducer, for request: HTTPRequest, on connection: Connection
    ) {
        guard connection.isOpen else { return ended(keepOpen: false, on: connection) }
        var head = response
        let gzip = producer.compressible && ContentCoding.acceptsGzip(request.header("Accept-Encoding"))
        if producer.compressible { head.vary(on: "Accept-Encoding") }
        if gzip { head.headers.append(("Content-Encoding", "gzip")) }
        if request.method == "HEAD" {
            return finish(
                head.head(keepAlive: request.keepAlive, framing: .none), keepAlive: request.keepAlive, on: connection)
        }
        let streams = server.httpStreams
        do {
            try streams.bodyStarted()
        } catch {
            let refusal: HTTPProblem
            switch error {
            case .draining: refusal = HTTPProblem(HealthError(.shuttingDown, "the server is stopping; retry"))
            case .full(let limit):
                refusal = HTTPProblem(
                    status: 503, title: ErrorCode.busy.name,
                    detail: "\(limit) reads are being answered (hkd --http-max-streams); retry later",
                    code: .busy)
            }
            return finish(
                refusal.response.serialized(keepAlive: request.keepAlive), keepAlive: request.keepAlive, on: connection)
        }
        let stream = HTTPBodyStream(
            response: head, gzip: gzip, keepAlive: request.keepAlive, chunked: request.acceptsChunked,
            connection: connection
        ) { [self] keepOpen in
            streams.bodyEnded()
            ended(keepOpen: keepOpen, on: connection)
        }
        state.value.stream = stream
        do {
            try PosixThread.detach(name: "hkd-http-body") { stream.finish(producer.produce(stream)) }
            if state.value.buffer.count <= limits.parser.maxHeaderBytes { connection.resumeReading() }
        } catch {
            streams.bodyEnded()
            state.value.stream = nil
            let busy = HTTPProblem(HealthError(.busy, "the server is busy (\(error)); retry later"))
            finish(busy.response.serialized(keepAlive: false), keepAlive: false, on: connection)
        }
    }

    private func finish(_ bytes: [UInt8], keepAlive: Bool, on connection: Connection) {
        guard connection.isOpen else { return ended(keepOpen: false, on: connection) }
        connection.write(bytes)
        if !keepAlive { connection.closeAfterFlush() }
        ended(keepOpen: keepAlive, on: connection)
    }

    /// A response is complete (or cut off): reads the next request unless the connection is closing.
    private func ended(keepOpen: Bool, on connection: Connection) {
        state.value.serving = false
        state.value.stream = nil
        guard keepOpen, connection.isOpen else { return }
        connection.resumeReading()
        arm(connection, after: limits.idleDeadline)
        parseNext(connection)
    }

    /// Closes the connection after `delay` unless a request is being served by then.
    private func arm(_ connection: Connection, after delay: Duration) {
        state.value.deadline?.cancel()
        state.value.deadline = connection.loop.schedule(after: delay) { [self] in
            if !state.value.serving { connection.close() }
        }
    }
}
