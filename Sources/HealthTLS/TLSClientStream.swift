import HealthPosix
import Synchronization

/// A client's TLS connection over a blocking ``ClientSocket``: the handshake runs in ``connect(over:context:host:timeout:)``,
/// then ``read(maxBytes:timeout:)`` and ``write(_:timeout:)`` carry plaintext.
///
/// Threading: one thread may read while others write (writes are serialised); the session is under a lock
/// that no call holds while it waits on the socket for reading.
public final class TLSClientStream: ByteStream {
    private struct State {
        var engine: TLSEngine
        /// Decrypted bytes not yet returned by `read`.
        var plaintext: [UInt8] = []
        /// Ciphertext the reading side produced (a TLS response to a server's message), sent before the next write.
        var pendingOutput: [UInt8] = []
        /// The server ended the TLS session (close_notify).
        var closed = false
    }

    private let socket: ClientSocket
    private let state: Mutex<State>
    private let writeLock = Mutex(())
    /// The negotiated protocol, e.g. `TLSv1.3`.
    public let protocolVersion: String
    /// The server certificate's SHA-256 fingerprint.
    public let serverFingerprint: CertificateFingerprint?

    private init(socket: ClientSocket, engine: sending TLSEngine) {
        self.socket = socket
        protocolVersion = engine.protocolVersion
        serverFingerprint = engine.peerFingerprint
        state = Mutex(State(engine: engine))
    }

    /// Runs the TLS handshake over `socket` (already connected) within `timeout`, checking the server's
    /// certificate against `host` as `context` says. Throws ``TLSError`` for a TLS failure and ``SystemError``
    /// for a socket failure (ETIMEDOUT when the time ran out); the caller closes the socket on failure.
    public static func connect(over socket: ClientSocket, context: TLSContext, host: String, timeout: Duration?)
        throws -> TLSClientStream
    {
        let deadline = Deadline.after(timeout)
        let engine = try TLSEngine(context: context, host: host)
        do {
            try handshake(engine, over: socket, deadline: deadline)
        } catch let error as TLSError where error.kind == .peerNotTLS {
            throw TLSError(
                error.kind, error.message,
                plaintextReply: restOfPlaintextReply(error.plaintextReply, from: socket, deadline: deadline))
        }
        return TLSClientStream(socket: socket, engine: engine)
    }

    /// Runs the handshake to its end.
    private static func handshake(_ engine: TLSEngine, over socket: ClientSocket, deadline: Deadline) throws {
        while true {
            let done = try engine.handshake()
            var output: [UInt8] = []
            engine.takeOutput(appendingTo: &output)
            if !output.isEmpty { try socket.write(output, timeout: deadline.remaining) }
            if done { break }
            let bytes = try socket.read(maxBytes: 16 << 10, timeout: deadline.remaining)
            if bytes.isEmpty {
                throw TLSError(
                    engine.firstByte == nil ? .handshakeFailed : .peerNotTLS,
                    engine.firstByte == nil
                        ? "the server closed the connection during the TLS handshake"
                        : "the server does not speak TLS (it answered in plaintext)", plaintextReply: engine.opening)
            }
            bytes.withUnsafeBytes { engine.feed($0) }
        }
    }

    /// A plaintext server's answer, read on for at most half a second, to its end or 4 KiB: a server that
    /// refuses TLS in plaintext says why and closes.
    private static func restOfPlaintextReply(_ start: [UInt8], from socket: ClientSocket, deadline: Deadline) -> [UInt8]
    {
        var reply = start
        let limit = min(deadline, Deadline.after(.milliseconds(500)))
        while reply.count < TLSEngine.openingLimit,
            let more = try? socket.read(maxBytes: TLSEngine.openingLimit - reply.count, timeout: limit.remaining),
            !more.isEmpty
        {
            reply += more
        }
        return reply
    }

    public func read(maxBytes: Int, timeout: Duration?) throws -> [UInt8] {
        let deadline = Deadline.after(timeout)
        while true {
            let ready: [UInt8]? = state.withLock { state in
                if !state.plaintext.isEmpty {
                    let count = min(max(1, maxBytes), state.plaintext.count)
                    let head = Array(state.plaintext.prefix(count))
                    state.plaintext.removeFirst(count)
                    return head
                }
                return state.closed ? [] : nil
            }
            if let ready { return ready }
            let bytes = try socket.read(maxBytes: 64 << 10, timeout: deadline.remaining)
            if bytes.isEmpty { return [] }
            try state.withLock { state throws(TLSError) in
                bytes.withUnsafeBytes { state.engine.feed($0) }
                if try !state.engine.read(appendingTo: &state.plaintext) { state.closed = true }
                state.engine.takeOutput(appendingTo: &state.pendingOutput)
            }
        }
    }

    public func write(_ bytes: [UInt8], timeout: Duration?) throws {
        try writeLock.withLock { _ in
            let ciphertext = try state.withLock { state throws(TLSError) -> [UInt8] in
                var output = state.pendingOutput
                state.pendingOutput = []
                try state.engine.write(bytes)
                state.engine.takeOutput(appendingTo: &output)
                return output
            }
            try socket.write(ciphertext, timeout: timeout)
        }
    }

    public func shutdown() { socket.shutdown() }

    public func close() { socket.close() }
}
