import HealthCodec
import HealthHTTP
import HealthPosix
import Synchronization

/// The server's ``HTTPBodyWriter`` for one streamed response: frames the producer's bytes for the connection and
/// holds the producer back while the connection has too much unsent (backpressure).
///
/// The producer's thread writes; the connection's loop tells it what the connection did (``delivered(_:)``,
/// ``writabilityChanged(_:)``, ``clientGone()``). The first ``Limits/smallBody`` bytes are held back: a body
/// that ends within them is sent with `Content-Length`, a longer one goes out in chunks of
/// ``Limits/chunkBytes`` after a `Transfer-Encoding: chunked` head; to an HTTP/1.0 client, which knows no chunks,
/// in pieces of that size after a head with neither field, the connection closing at its end. The producer waits while more than
/// ``Limits/maxUnsent`` bytes are on their way to the loop or the connection's outbound queue is over its
/// high-water mark, so a response holds at most about `maxUnsent` + a chunk + the queue's high-water mark,
/// however long the body. It never waits on the loop's thread.
final class HTTPBodyStream: HTTPBodyWriter {
    /// The sizes that bound a streamed response's memory.
    struct Limits: Sendable {
        /// A body that ends within this many bytes is sent whole, with `Content-Length`.
        var smallBody = 64 * 1024
        /// Bytes gathered before they go out as a chunk (compressed first with gzip).
        var chunkBytes = 32 * 1024
        /// Bytes handed to the loop and not yet queued on the connection, beyond which the producer waits.
        var maxUnsent = 256 * 1024
    }

    /// What the loop reports and the producer waits on.
    private struct Flow {
        var inFlight = 0
        var writable = true
        var gone = false
        /// Called once the client has gone.
        var goneHandlers: [@Sendable () -> Void] = []
    }

    /// The producer's own state (only its thread takes this lock).
    private struct Output {
        var pending: [UInt8] = []
        var committed = false
        var deflater: Deflater?
        /// Header fields the producer added before the head left.
        var addedHeaders: [(name: String, value: String)] = []
    }

    private let flow = ConditionLock(Flow())
    private let output: Mutex<Output>
    private let connection: Connection
    private let response: HTTPResponse
    private let keepAlive: Bool
    private let chunked: Bool
    private let limits: Limits
    private let ended: @Sendable (_ keepOpen: Bool) -> Void

    /// A stream answering with `response`'s status and headers on `connection`, compressed with gzip when
    /// `gzip` (the caller added `Content-Encoding`), a long body in chunks when `chunked` (else, for HTTP/1.0,
    /// delimited by closing the connection). `ended` runs on the loop once the response is complete or cut off:
    /// whether the connection stays open.
    init(
        response: HTTPResponse, gzip: Bool, keepAlive: Bool, chunked: Bool, connection: Connection,
        limits: Limits = Limits(), ended: @escaping @Sendable (_ keepOpen: Bool) -> Void
    ) {
        self.response = response
        self.keepAlive = keepAlive
        self.chunked = chunked
        self.connection = connection
        self.limits = limits
        self.ended = ended
        output = Mutex(Output(deflater: gzip ? Deflater(level: 1, format: .gzip) : nil))
    }

    // MARK: The producer's side

    func addHeader(_ name: String, _ value: String) -> Bool {
        output.withLock { out in
            guard !out.committed else { return false }
            out.addedHeaders.append((name, value))
            return true
        }
    }

    /// The response's head with the headers the producer added: with `Content-Length: bodyLength`, or for a
    /// body that goes out as it comes (`nil`) chunked, or for HTTP/1.0 closing the connection at its end.
    private func head(_ out: Output, bodyLength: Int?) -> [UInt8] {
        var head = response
        head.headers += out.addedHeaders
        if let bodyLength { return head.head(keepAlive: keepAlive, framing: .length(bodyLength)) }
        return chunked
            ? head.head(keepAlive: keepAlive, framing: .chunked) : head.head(keepAlive: false, framing: .none)
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if isGone { return false }
        output.withLock { out in
            out.pending.append(contentsOf: bytes)
            if !out.committed {
                guard out.pending.count > limits.smallBody else { return }
                out.committed = true
                deliver(head(out, bodyLength: nil))
            }
            if out.pending.count >= limits.chunkBytes { sendPending(&out, flush: false) }
        }
        return !isGone
    }

    func flush() -> Bool {
        if isGone { return false }
        output.withLock { out in
            if !out.committed {
                out.committed = true
                deliver(head(out, bodyLength: nil))
            }
            sendPending(&out, flush: true)
        }
        return !isGone
    }

    /// Ends the response once the producer returned: completes the body, or answers with `failure` when no byte
    /// of it left yet, or cuts the chunked body off (no last chunk, the connection closed after what was sent).
    /// A body without chunks (HTTP/1.0) ends by closing the connection, whether complete or cut off.
    func finish(_ failure: HTTPResponse?) {
        let keepOpen: Bool = output.withLock { out in
            if isGone { return false }
            if let failure {
                guard out.committed else {
                    deliver(failure.serialized(keepAlive: keepAlive))
                    return keepAlive
                }
                return false
            }
            if !out.committed {
                var body = out.pending
                if let deflater = out.deflater {
                    body = body.withUnsafeBytes { deflater.compress($0) } + deflater.finish()
                }
                deliver(head(out, bodyLength: body.count) + body)
                return keepAlive
            }
            sendPending(&out, flush: false)
            guard chunked else {
                if let deflater = out.deflater { deliver(deflater.finish()) }
                return false
            }
            if let deflater = out.deflater { deliver(deflater.finish().withUnsafeBytes(HTTPChunk.framed)) }
            deliver(HTTPChunk.last)
            return keepAlive
        }
        let (connection, ended) = (connection, ended)
        _ = connection.loop.execute {
            if !keepOpen { connection.closeAfterFlush() }
            ended(keepOpen)
        }
    }

    /// Frames the pending bytes as a chunk (compressed first with gzip) and sends it; without chunks, as they are.
    private func sendPending(_ out: inout Output, flush: Bool) {
        let payload = out.deflater.map { deflater in out.pending.withUnsafeBytes { deflater.compress($0, flush: flush) }
        }
        let bytes = payload ?? out.pending
        out.pending.removeAll(keepingCapacity: true)
        deliver(chunked ? bytes.withUnsafeBytes(HTTPChunk.framed) : bytes)
    }

    /// Hands `bytes` to the loop, first waiting while too much is unsent; drops them once the client has gone.
    private func deliver(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let maxUnsent = limits.maxUnsent
        let open = flow.wait { flow -> Bool? in
            if flow.gone { return false }
            guard flow.inFlight <= maxUnsent, flow.writable else { return nil }
            flow.inFlight += bytes.count
            return true
        }
        guard open == true else { return }
        let accepted = connection.loop.execute { [self] in
            connection.write(bytes)
            delivered(bytes.count)
        }
        if !accepted { clientGone() }
    }

    private var isGone: Bool { flow.withLock { $0.gone } }

    func onClientGone(_ body: @escaping @Sendable () -> Void) {
        let gone = flow.withLock { flow in
            if !flow.gone { flow.goneHandlers.append(body) }
            return flow.gone
        }
        if gone { body() }
    }

    /// Marks the client gone (waking the producer) and calls the handlers waiting for that, once.
    private func markGone() {
        let handlers = flow.update { flow in
            flow.gone = true
            defer { flow.goneHandlers = [] }
            return flow.goneHandlers
        }
        for handler in handlers { handler() }
    }

    // MARK: The loop's side

    /// `count` bytes were queued on the connection (loop thread).
    private func delivered(_ count: Int) {
        let open = connection.isOpen
        flow.update { $0.inFlight -= count }
        if !open { markGone() }
    }

    /// The connection's outbound queue crossed a water mark (loop thread).
    func writabilityChanged(_ isWritable: Bool) {
        flow.update { $0.writable = isWritable }
    }

    /// The connection closed: the producer stops at its next write (any thread).
    func clientGone() { markGone() }
}
