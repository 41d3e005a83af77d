import HealthModel
import HealthPosix
import HealthTLS
import HealthWire
import Synchronization

/// One protocol session over one TCP connection: the socket, the thread that reads it, and the calls back into
/// the waiting requests and subscriptions. The protocol itself (handshake, matching replies to requests by id,
/// pushed updates, timeouts, the heartbeat, the end of the connection) is its ``ClientConnectionStateMachine``'s.
///
/// Thread-safe: any number of tasks may send requests at once. A reader thread owned by the connection reads
/// replies; when the connection ends, every waiting request fails with ``ErrorCode/connectionLost``.
///
/// A connection opened *in place* (``open(_:readingInPlace:)``, for a program whose task owns its thread, as
/// hkq's does) starts without the reader thread: a request sent from the opening thread while nothing else waits
/// reads its own reply on that thread. The reader thread starts the first time anything else needs replies read:
/// a request from another thread, requests still waiting when the in-place one is answered, a subscription.
package final class HealthConnection: Sendable {
    /// What waits for a request's reply.
    typealias Waiter = CheckedContinuation<[Message], any Error>
    /// The protocol logic this connection carries out.
    typealias Machine = ClientConnectionStateMachine<Waiter, SubscriptionHandlers>

    /// The server's welcome: its version and the limits it enforces.
    package let welcome: Welcome

    let socket: any ByteStream
    let configuration: ClientConfiguration
    private let state: Mutex<State>
    private let writeLock: Mutex<FrameEncoder>
    /// The thread that may read replies in place, for a connection opened in place.
    private let inPlaceThread: UInt?

    /// Who reads the server's frames.
    enum Reading {
        /// Nobody yet (a connection opened in place, between requests).
        case idle
        /// The opening thread, for a request of its own.
        case inPlace
        /// The connection's reader thread, until the connection ends.
        case thread
    }

    private struct State {
        var machine: Machine
        var reading = Reading.idle
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

    /// A connection over `socket`, whose `machine` has completed the handshake.
    init(socket: any ByteStream, machine: Machine, configuration: ClientConfiguration, inPlaceThread: UInt?) {
        guard let welcome = machine.welcome else { preconditionFailure("a connection before its handshake") }
        self.socket = socket
        self.welcome = welcome
        self.configuration = configuration
        self.inPlaceThread = inPlaceThread
        self.state = Mutex(State(machine: machine))
        writeLock = Mutex(HealthConnection.requestEncoder(configuration, limits: welcome.limits.frameLimits))
    }

    /// The encoder of request frames: deflating payloads of 512 bytes or more, or when the configuration says not
    /// to, only those too large to fit the server's frame limit otherwise.
    static func requestEncoder(_ configuration: ClientConfiguration, limits: FrameLimits) -> FrameEncoder {
        if configuration.compressesRequests { return FrameEncoder() }
        return FrameEncoder(compressionThreshold: limits.maxFrameBytes &+ 1)
    }

    /// Whether the connection's reader thread has started (at once, unless it was opened in place).
    package var hasReaderThread: Bool { state.withLock { $0.reading == .thread } }

    /// Whether the connection has ended (requests on it fail at once).
    package var isClosed: Bool { state.withLock { $0.machine.isClosed } }

    /// Sends a request and waits for its whole reply (every frame of a streamed one).
    ///
    /// Throws ``HealthClientError``: `.server` with the server's code for an error reply, `.local` with
    /// ``ErrorCode/connectionLost`` or ``ErrorCode/timedOut`` when no reply can come.
    package func request(_ message: Message) async throws(HealthClientError) -> [Message] {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                if let id = transmit(message, waiter: continuation) { awaitReply(to: id) }
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
                let id = transmit(.subscribe(Subscribe(request)), waiter: continuation, subscriber: handlers)
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
        state.withLock { $0.machine.unsubscribe(subscriptionID) }
        _ = try await send(Unsubscribe(subscriptionID: subscriptionID))
    }

    /// Closes the connection; waiting requests fail with ``ErrorCode/connectionLost``.
    package func close() {
        fail(.local(.connectionLost, "the connection was closed by the client"))
    }

    /// Registers and sends a request; returns its id, or nil when it already failed (its waiter resumed).
    private func transmit(_ message: Message, waiter: Waiter, subscriber: SubscriptionHandlers? = nil) -> UInt32? {
        let now = ContinuousClock.now
        let actions = state.withLock { $0.machine.request(message, waiter: waiter, subscriber: subscriber, now: now) }
        guard case .send(let message, let id)? = actions.first else {
            perform(actions)
            return nil
        }
        return write(message, requestID: id) ? id : nil
    }

    /// Does what the machine asked, in order, outside the lock.
    private func perform(_ actions: [Machine.Action]) {
        for action in actions {
            switch action {
            case .send(let message, let id):
                _ = write(message, requestID: id)
            case .sendControl(let message, let id):
                // A frame that cannot be written leaves the silence to run out: the heartbeat decides.
                try? writeLock.withLock { encoder in
                    try socket.write(encoder.encode(message.frame(requestID: id)), timeout: .seconds(1))
                }
            case .succeed(let waiter, let replies):
                waiter.resume(returning: replies)
            case .fail(let waiter, let error):
                waiter.resume(throwing: error)
            case .update(let handlers, let update):
                handlers.update(update)
            case .end(let handlers, let error):
                handlers.end(error)
            case .close:
                socket.shutdown()
            }
        }
    }

    /// Writes a request's frame; returns whether it was written (if not, the connection has failed).
    private func write(_ message: Message, requestID: UInt32) -> Bool {
        let failure: HealthClientError
        do {
            try writeLock.withLock { encoder in
                try socket.write(
                    encoder.encode(message.frame(requestID: requestID)), timeout: configuration.requestTimeout)
            }
            return true
        } catch let error as SystemError {
            failure = .local(
                error.isTimeout ? .timedOut : .connectionLost, "sending \(message.kind) failed: \(error.message)")
        } catch let error as TLSError {
            failure = HealthClientError(tlsError: error, configuration)
        } catch {
            failure = .local(.connectionLost, "sending \(message.kind) failed: \(error)")
        }
        fail(failure)
        return false
    }

    /// Ends the connection: waiting requests fail with `error`, later ones at once.
    func fail(_ error: HealthClientError) {
        perform(state.withLock { $0.machine.failed(error) })
    }

    /// Makes `reader` the connection's reader, unless something reads already; returns whether it did.
    func claimReading(for reader: Reading) -> Bool {
        state.withLock { state in
            guard state.reading == .idle else { return false }
            state.reading = reader
            return true
        }
    }

    /// Starts the reader thread (reading claimed for it); if it cannot start, the connection fails.
    func startReader() throws(HealthClientError) {
        do {
            _ = try PosixThread.spawn(name: "hk-client-reader") { [self] in
                while readOnce() {}
            }
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
            if claimReading(for: .thread) { try? startReader() }
            return
        }
        guard claimReading(for: .inPlace) else { return }
        while state.withLock({ $0.machine.isWaiting(for: id) }), readOnce() {}
        let handOver = state.withLock { state -> Bool in
            if state.machine.awaitsFrames && !state.machine.isClosed {
                state.reading = .thread
                return true
            }
            state.reading = .idle
            return false
        }
        if handOver { try? startReader() }
    }

    /// Waits up to a second for bytes, hands them to the machine, then lets it check its deadlines when one is
    /// due, and does what it asks. Returns false once the connection has ended.
    private func readOnce() -> Bool {
        let event: Result<[UInt8], HealthClientError>?
        do {
            event = .success(try socket.read(maxBytes: 64 << 10, timeout: .seconds(1)))
        } catch let error as SystemError where error.isTimeout {
            event = nil
        } catch let error as TLSError {
            event = .failure(HealthClientError(tlsError: error, configuration))
        } catch {
            event = .failure(.local(.connectionLost, "connection to the server failed: \(error)"))
        }
        let now = ContinuousClock.now
        let (actions, open) = state.withLock { state -> ([Machine.Action], Bool) in
            var actions: [Machine.Action]
            switch event {
            case nil: actions = []
            case .success(let bytes) where bytes.isEmpty: actions = state.machine.peerClosed()
            case .success(let bytes): actions = state.machine.received(bytes, now: now)
            case .failure(let error): actions = state.machine.failed(error)
            }
            if let due = state.machine.nextDeadline, due <= now { actions += state.machine.tick(now: now) }
            return (actions, !state.machine.isClosed)
        }
        perform(actions)
        return open
    }
}
