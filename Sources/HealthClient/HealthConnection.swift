import HealthCodec
import HealthModel
import HealthPosix
import HealthTLS
import HealthWire
import Synchronization

/// One protocol session over one TCP connection: handshake, pipelined requests matched by request id,
/// streamed replies collected, pushed updates routed to their subscription.
///
/// Thread-safe: any number of tasks may send requests at once. A reader thread owned by the connection decodes
/// replies; when the connection ends, every waiting request fails with ``ErrorCode/connectionLost``.
///
/// A connection opened *in place* (``open(_:readingInPlace:)``, for a program whose task owns its thread, as
/// hkq's does) starts without the reader thread: a request sent from the opening thread while nothing else waits
/// reads its own reply on that thread. The reader thread starts the first time anything else needs replies read:
/// a request from another thread, requests still waiting when the in-place one is answered, a subscription.
package final class HealthConnection: Sendable {
    /// The server's welcome: its version and the limits it enforces.
    package let welcome: Welcome

    private let socket: any ByteStream
    private let configuration: ClientConfiguration
    private let state: Mutex<State>
    private let writeLock: Mutex<FrameEncoder>

    private struct Pending {
        var replies: [Message] = []
        var deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<[Message], any Error>
    }

    /// Who reads the server's frames.
    private enum Reading {
        /// Nobody yet (a connection opened in place, between requests): ``State/inbox`` holds the decoder.
        case idle
        /// The opening thread, for a request of its own.
        case inPlace
        /// The connection's reader thread, until the connection ends.
        case thread
    }

    /// What the reader of the connection keeps between reads: frames half received and the heartbeat's clock.
    private struct Inbox: Sendable {
        var decoder: FrameDecoder
        var heartbeat: Heartbeat
    }

    private struct State {
        var reading: Reading
        /// The reading state while ``reading`` is `idle`; taken by whoever reads.
        var inbox: Inbox?
        var nextRequestID: UInt32 = 1
        var pending: [UInt32: Pending] = [:]
        var updateHandlers: [UInt32: @Sendable (Update) -> Void] = [:]
        /// Handlers of subscribe requests in flight, by request id: installed when `subscribed` arrives, on the
        /// reader thread, before any update frame that follows it is delivered.
        var subscribing: [UInt32: SubscriptionHandlers] = [:]
        /// Called once when the connection ends, per subscription id.
        var endHandlers: [UInt32: @Sendable (HealthClientError) -> Void] = [:]
        var failure: HealthClientError?
    }

    /// What a subscription on this connection calls: each update in order, then once the end of the connection.
    package struct SubscriptionHandlers: Sendable {
        package var update: @Sendable (Update) -> Void
        package var end: @Sendable (HealthClientError) -> Void

        /// Handlers from two closures (both run on the connection's reader thread; keep them short).
        package init(update: @escaping @Sendable (Update) -> Void, end: @escaping @Sendable (HealthClientError) -> Void)
        {
            self.update = update
            self.end = end
        }
    }

    /// The thread that may read replies in place, for a connection opened in place.
    private let inPlaceThread: UInt?

    private init(socket: any ByteStream, welcome: Welcome, configuration: ClientConfiguration, inPlaceThread: UInt?) {
        self.socket = socket
        self.welcome = welcome
        self.configuration = configuration
        self.inPlaceThread = inPlaceThread
        let inbox = Inbox(
            decoder: FrameDecoder(limits: welcome.limits.frameLimits),
            heartbeat: Heartbeat(interval: configuration.heartbeat))
        self.state = Mutex(State(reading: .idle, inbox: inbox))
        writeLock = Mutex(HealthConnection.requestEncoder(configuration, limits: welcome.limits.frameLimits))
    }

    /// The encoder of request frames: deflating payloads of 512 bytes or more, or when the configuration says not
    /// to, only those too large to fit the server's frame limit otherwise.
    static func requestEncoder(_ configuration: ClientConfiguration, limits: FrameLimits) -> FrameEncoder {
        if configuration.compressesRequests { return FrameEncoder() }
        return FrameEncoder(compressionThreshold: limits.maxFrameBytes &+ 1)
    }

    /// Connects and performs the handshake. Blocks the calling thread for at most the connect timeout plus one
    /// round trip; `HealthClient` calls it off the cooperative pool.
    ///
    /// `readingInPlace` defers the reader thread: requests sent from the calling thread then read their replies
    /// on it (blocking it while they wait). Only for a thread that serves nothing else, never one of Swift's
    /// cooperative pool.
    package static func open(_ configuration: ClientConfiguration, readingInPlace: Bool = false)
        throws(HealthClientError) -> HealthConnection
    {
        let tcp: ClientSocket
        do {
            tcp = try ClientSocket.connect(
                host: configuration.host, port: configuration.port, timeout: configuration.connectTimeout)
        } catch {
            throw .local(
                .connectionLost, "cannot connect to \(configuration.host):\(configuration.port): \(error.message)")
        }
        let socket: any ByteStream
        do {
            socket = try secure(tcp, configuration)
        } catch {
            tcp.close()
            throw error
        }
        do {
            let welcome = try handshake(socket, configuration)
            let connection = HealthConnection(
                socket: socket, welcome: welcome, configuration: configuration,
                inPlaceThread: readingInPlace ? PosixThread.currentID : nil)
            if !readingInPlace, let inbox = connection.claimInbox(for: .thread) { try connection.startReader(inbox) }
            return connection
        } catch {
            socket.close()
            throw error
        }
    }

    /// The TCP connection itself, or with `configuration.tls` a TLS stream over it once the TLS handshake
    /// passed every check.
    private static func secure(_ tcp: ClientSocket, _ configuration: ClientConfiguration)
        throws(HealthClientError) -> any ByteStream
    {
        guard let options = configuration.tls else { return tcp }
        do {
            let context = try TLSContext.client(options)
            return try TLSClientStream.connect(
                over: tcp, context: context, host: configuration.host, timeout: configuration.connectTimeout)
        } catch let error as TLSError {
            // A server that answered TLS in plaintext with an error frame (tlsUnavailable, tooManyConnections …)
            // said why: its error, retryable or not, is the answer.
            if let refusal = Self.errorFrame(in: error.plaintextReply) { throw HealthClientError(.server, refusal) }
            throw HealthClientError(tlsError: error, configuration)
        } catch let error as SystemError {
            throw .local(
                error.isTimeout ? .timedOut : .connectionLost,
                "TLS handshake with \(configuration.host):\(configuration.port) failed: \(error.message)")
        } catch {
            throw .local(.internalError, "TLS handshake failed: \(error)")
        }
    }

    /// The error an `error` frame at the start of `bytes` carries, if they hold one whole.
    private static func errorFrame(in bytes: [UInt8]) -> HealthError? {
        var decoder = FrameDecoder(limits: .standard)
        decoder.append(bytes)
        guard let frame = try? decoder.next(), case .error(let reply)? = try? Message.decode(frame) else { return nil }
        return reply.healthError
    }

    /// hello, then (with a token) challenge → proof, then welcome, whose server signature must be right
    /// before anything else is sent (Protocol/PROTOCOL.md "Authentication"). The token never leaves this side.
    static func handshake(_ socket: any ByteStream, _ configuration: ClientConfiguration)
        throws(HealthClientError) -> Welcome
    {
        let timeout = configuration.connectTimeout
        var decoder = FrameDecoder(limits: .standard)
        let encoder = FrameEncoder()
        do {
            let nonce = configuration.token.isEmpty ? [] : try SecureRandom.bytes(TokenAuthentication.nonceBytes)
            var handshake = try ClientHandshake(
                clientName: configuration.clientName, token: configuration.token, nonce: nonce)
            try socket.write(encoder.encode(Message.hello(handshake.hello).frame(requestID: 0)), timeout: timeout)
            while true {
                if let frame = try decoder.next() {
                    switch try Message.decode(frame) {
                    case .challenge(let challenge):
                        let proof = try handshake.respond(to: challenge, payload: frame.payload)
                        try socket.write(encoder.encode(Message.proof(proof).frame(requestID: 0)), timeout: timeout)
                    case .welcome(let welcome):
                        try handshake.check(welcome)
                        return welcome
                    case .error(let reply): throw HealthClientError(.server, reply.healthError)
                    default:
                        throw HealthClientError.local(.malformedFrame, "the server answered hello with \(frame.kind)")
                    }
                    continue
                }
                let bytes = try socket.read(maxBytes: 64 << 10, timeout: timeout)
                if bytes.isEmpty {
                    throw HealthClientError.local(
                        .connectionLost, "the server closed the connection during the handshake")
                }
                if configuration.tls == nil, bytes[0] == 0x15 || bytes[0] == 0x16 {
                    // A TLS record (an alert, a hello) in answer to a plaintext hello.
                    throw HealthClientError.local(
                        .tlsRequired,
                        "the server at \(configuration.host):\(configuration.port) speaks TLS: connect with TLS (hkq --tls)"
                    )
                }
                decoder.append(bytes)
            }
        } catch let error as HealthClientError {
            throw error
        } catch let error as TLSError {
            throw HealthClientError(tlsError: error, configuration)
        } catch let error as SystemError {
            throw .local(
                error.isTimeout ? .timedOut : .connectionLost,
                "handshake with \(configuration.host):\(configuration.port) failed: \(error.message)")
        } catch let error as WireError {
            throw .local(error.code, "the server's handshake reply is malformed: \(error.message)")
        } catch let error as HealthError {
            throw .local(error.code, error.message)
        } catch {
            throw .local(.internalError, "handshake failed: \(error)")
        }
    }

    /// Makes `reader` the connection's reader and hands it the inbox, unless something reads already.
    private func claimInbox(for reader: Reading) -> Inbox? {
        state.withLock { state in
            guard state.reading == .idle, let inbox = state.inbox.take() else { return nil }
            state.reading = reader
            return inbox
        }
    }

    /// Starts the reader thread with `inbox` (claimed for it); if it cannot start, the connection fails.
    private func startReader(_ inbox: Inbox) throws(HealthClientError) {
        do {
            _ = try PosixThread.spawn(name: "hk-client-reader") { [self] in readLoop(inbox) }
        } catch {
            let failure = HealthClientError.local(.internalError, "cannot start the reader thread: \(error.message)")
            fail(failure)
            throw failure
        }
    }

    /// Reads, on the calling thread, until request `id` is answered (or fails), when the connection was opened in
    /// place on this thread and nothing reads yet; from another thread, makes sure the reader thread reads.
    /// Afterwards the reader thread takes over if other requests or subscriptions still wait for frames.
    private func awaitReply(to id: UInt32) {
        // Opened otherwise, the reader thread has read since the connection opened.
        guard let inPlaceThread else { return }
        guard inPlaceThread == PosixThread.currentID else {
            if let inbox = claimInbox(for: .thread) { try? startReader(inbox) }
            return
        }
        guard var inbox = claimInbox(for: .inPlace) else { return }
        while state.withLock({ $0.pending[id] != nil }), readOnce(&inbox) {}
        let handOver = state.withLock { state -> Bool in
            let waiting = !state.pending.isEmpty || !state.subscribing.isEmpty || !state.endHandlers.isEmpty
            if waiting && state.failure == nil {
                state.reading = .thread
                return true
            }
            state.reading = .idle
            state.inbox = inbox
            return false
        }
        if handOver { try? startReader(inbox) }
    }

    /// Whether the connection's reader thread has started (at once, unless it was opened in place).
    package var hasReaderThread: Bool { state.withLock { $0.reading == .thread } }

    /// Whether the connection has ended (requests on it fail at once).
    package var isClosed: Bool { state.withLock { $0.failure != nil } }

    /// Sends a request and waits for its whole reply (every frame of a streamed one).
    ///
    /// Throws ``HealthClientError``: `.server` with the server's code for an error reply, `.local` with
    /// ``ErrorCode/connectionLost`` or ``ErrorCode/timedOut`` when no reply can come.
    package func request(_ message: Message) async throws(HealthClientError) -> [Message] {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                if let id = transmit(message, continuation: continuation) { awaitReply(to: id) }
            }
        } catch let error as HealthClientError {
            throw error
        } catch {
            throw .local(.internalError, "\(error)")
        }
    }

    /// Sends a request whose reply is a single message.
    package func requestOne(_ message: Message) async throws(HealthClientError) -> Message {
        let replies = try await request(message)
        guard replies.count == 1, let reply = replies.first else {
            throw .local(.malformedPayload, "expected one reply to \(message.kind), got \(replies.count)")
        }
        return reply
    }

    /// Sends a request answered by one frame and returns the reply, typed by the request (no retry: see
    /// `HealthClient.send(_:)` for that).
    package func send<R: Request>(_ request: R) async throws(HealthClientError) -> R.Reply {
        try R.reply(in: await self.request(Message(request)))
    }

    /// Sends a subscribe request; returns the subscription id. `handlers.update` receives every update of the
    /// subscription in order (none is missed between the reply and the installation of the handler), and
    /// `handlers.end` is called once if the connection ends while the subscription is held.
    package func subscribe(_ request: SubscriptionRequest, handlers: SubscriptionHandlers)
        async throws(HealthClientError) -> UInt32
    {
        let reply: [Message]
        do {
            reply = try await withCheckedThrowingContinuation { continuation in
                let id = transmit(.subscribe(Subscribe(request)), continuation: continuation, subscription: handlers)
                if let id { awaitReply(to: id) }
            }
        } catch let error as HealthClientError {
            throw error
        } catch {
            throw .local(.internalError, "\(error)")
        }
        return try Subscribe.reply(in: reply).subscriptionID
    }

    /// Ends a subscription: no update handler runs for it once this returns.
    package func unsubscribe(_ subscriptionID: UInt32) async throws(HealthClientError) {
        state.withLock { state in
            state.updateHandlers[subscriptionID] = nil
            state.endHandlers[subscriptionID] = nil
        }
        _ = try await send(Unsubscribe(subscriptionID: subscriptionID))
    }

    /// Routes pushed updates with this subscription id to `handler` (on the reader thread; keep it short).
    package func setUpdateHandler(subscriptionID: UInt32, _ handler: (@Sendable (Update) -> Void)?) {
        state.withLock { $0.updateHandlers[subscriptionID] = handler }
    }

    /// Registers and sends a request; returns its id, or nil when it already failed (its continuation resumed).
    private func transmit(
        _ message: Message, continuation: CheckedContinuation<[Message], any Error>,
        subscription: SubscriptionHandlers? = nil
    ) -> UInt32? {
        let registered: UInt32? = state.withLock { state in
            if let failure = state.failure {
                continuation.resume(throwing: failure)
                return nil
            }
            let id = state.nextRequestID
            state.nextRequestID = id == UInt32.max ? 1 : id + 1
            state.pending[id] = Pending(deadline: .now + configuration.requestTimeout, continuation: continuation)
            if let subscription { state.subscribing[id] = subscription }
            return id
        }
        guard let id = registered else { return nil }
        do {
            try writeLock.withLock { encoder in
                try socket.write(encoder.encode(message.frame(requestID: id)), timeout: configuration.requestTimeout)
            }
        } catch let error as SystemError {
            fail(
                .local(
                    error.isTimeout ? .timedOut : .connectionLost, "sending \(message.kind) failed: \(error.message)"))
            return nil
        } catch let error as TLSError {
            fail(HealthClientError(tlsError: error, configuration))
            return nil
        } catch {
            fail(.local(.connectionLost, "sending \(message.kind) failed: \(error)"))
            return nil
        }
        return id
    }

    /// The reader thread: decodes frames until the connection ends.
    private func readLoop(_ inbox: Inbox) {
        var inbox = inbox
        while readOnce(&inbox) {}
    }

    /// Waits up to a second for bytes and delivers every whole frame they complete; on a quiet second, expires
    /// overdue requests and checks the heartbeat. Returns false once the connection has ended.
    private func readOnce(_ inbox: inout Inbox) -> Bool {
        let bytes: [UInt8]
        do {
            bytes = try socket.read(maxBytes: 64 << 10, timeout: .seconds(1))
        } catch let error as SystemError where error.isTimeout {
            expireOverdueRequests()
            let subscribed = state.withLock { !$0.endHandlers.isEmpty }
            switch inbox.heartbeat.check(now: .now, subscribed: subscribed) {
            case .quiet: break
            case .ping: sendKeepAlive()
            case .lost(let silence):
                fail(.local(.connectionLost, "the server sent nothing for \(silence), not even a pong"))
                return false
            }
            return true
        } catch let error as TLSError {
            fail(HealthClientError(tlsError: error, configuration))
            return false
        } catch {
            fail(.local(.connectionLost, "connection to the server failed: \(error)"))
            return false
        }
        if bytes.isEmpty {
            fail(.local(.connectionLost, "the server closed the connection"))
            return false
        }
        inbox.heartbeat.heard(at: .now)
        inbox.decoder.append(bytes)
        do {
            while let frame = try inbox.decoder.next() {
                try deliver(frame)
            }
        } catch let error as WireError {
            fail(.local(error.code, "malformed frame from the server: \(error.message)"))
            return false
        } catch let error as HealthError {
            fail(.local(error.code, "malformed reply from the server: \(error.message)"))
            return false
        } catch {
            fail(.local(.internalError, "\(error)"))
            return false
        }
        return true
    }

    private func deliver(_ frame: Frame) throws {
        let message = try Message.decode(frame)
        if case .update(let update) = message {
            let handler = state.withLock { $0.updateHandlers[frame.requestID] }
            handler?(update)
            return
        }
        if case .error(let reply) = message, reply.closesConnection || frame.requestID == 0 {
            // A connection-level error: the server closes; every request waiting here fails with it.
            fail(HealthClientError(.server, reply.healthError))
            return
        }
        state.withLock { state in
            if let handlers = state.subscribing.removeValue(forKey: frame.requestID),
                case .subscribed(let subscribed) = message
            {
                state.updateHandlers[subscribed.subscriptionID] = handlers.update
                state.endHandlers[subscribed.subscriptionID] = handlers.end
            }
            guard var pending = state.pending[frame.requestID] else { return }
            if case .error(let reply) = message {
                state.pending[frame.requestID] = nil
                pending.continuation.resume(throwing: HealthClientError(.server, reply.healthError))
                return
            }
            pending.replies.append(message)
            if frame.flags.contains(.more) {
                state.pending[frame.requestID] = pending
            } else {
                state.pending[frame.requestID] = nil
                pending.continuation.resume(returning: pending.replies)
            }
        }
    }

    /// Sends a ping under request id 0, which nothing waits for: its pong only shows the server is there.
    private func sendKeepAlive() {
        do {
            try writeLock.withLock { encoder in
                let ping = Message.ping(Ping(nonce: 0x6862_6561_7274_6265))  // "hbeartbe"
                try socket.write(encoder.encode(ping.frame(requestID: 0)), timeout: .seconds(1))
            }
        } catch {
            // A ping that cannot be written leaves the silence to run out: the next checks decide.
        }
    }

    private func expireOverdueRequests() {
        let now = ContinuousClock.now
        state.withLock { state in
            for (id, pending) in state.pending where pending.deadline <= now {
                state.pending[id] = nil
                pending.continuation.resume(
                    throwing: HealthClientError.local(.timedOut, "no reply within \(configuration.requestTimeout)"))
            }
        }
    }

    /// Ends the connection: waiting requests fail with `error`, later ones at once.
    private func fail(_ error: HealthClientError) {
        let (pending, ends) = state.withLock { state -> ([Pending], [@Sendable (HealthClientError) -> Void]) in
            if state.failure == nil { state.failure = error }
            let waiting = Array(state.pending.values)
            state.pending.removeAll()
            state.subscribing.removeAll()
            let ends = Array(state.endHandlers.values)
            state.endHandlers.removeAll()
            state.updateHandlers.removeAll()
            return (waiting, ends)
        }
        for request in pending { request.continuation.resume(throwing: error) }
        for end in ends { end(error) }
        socket.shutdown()
    }

    /// Closes the connection; waiting requests fail with ``ErrorCode/connectionLost``.
    package func close() {
        fail(.local(.connectionLost, "the connection was closed by the client"))
    }
}
