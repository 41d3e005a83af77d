import HealthModel
import HealthPosix
import HealthWire

/// Binds one TCP connection to its ``ConnectionStateMachine``: feeds it bytes, performs its actions, runs
/// dispatched requests on the worker pool and writes their replies back on the connection's loop.
///
/// Loop-confined: every method runs on the connection's event-loop thread (worker results hop back with
/// `loop.execute`), hence `@unchecked Sendable`.
final class ServerConnection: ConnectionHandler, @unchecked Sendable {
    private var machine: ConnectionStateMachine
    private let server: HealthServer
    private let id: UInt64
    private var connection: Connection?
    private var idleTimer: ScheduledTask?
    private var lastActivity = Deadline.now()
    private var pausedForPipelining = false
    private var pausedForBackpressure = false
    /// The peer's host, for the failure throttle.
    private let peer: String
    /// Set by a failed hello: how long the refusal waits (see ``FailureThrottle``).
    private let refusalDelay: RefusalDelay
    private var subscriptions: ConnectionSubscriptions?

    init(server: HealthServer, id: UInt64, peer: String) {
        self.server = server
        self.id = id
        self.peer = peer
        let refusalDelay = RefusalDelay()
        self.refusalDelay = refusalDelay
        self.machine = ConnectionStateMachine(
            limits: server.configuration.sessionLimits, serverVersion: HealthServer.version, connectionID: id,
            authenticator: ThrottledAuthenticator(
                base: server.authenticator, throttle: server.failures, peer: peer, refusalDelay: refusalDelay))
    }

    func connectionDidOpen(_ connection: Connection) {
        self.connection = connection
        subscriptions = ConnectionSubscriptions(
            hub: server.subscriptions, store: server.store, workers: server.workers, loop: connection.loop,
            timeout: .seconds(Int64(clamping: server.configuration.subscriberTimeoutSeconds)),
            isOpen: { [unowned self] in self.connection?.isOpen ?? false },
            isWritable: { [unowned self] in self.connection?.isWritable ?? false },
            write: { [unowned self] in self.connection?.write($0) }, complete: { [unowned self] in self.finish($0) },
            terminate: { [unowned self] in self.perform(self.machine.terminate($0)) },
            forceClose: { [unowned self] in self.connection?.close() })
        armIdleTimer()
    }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        lastActivity = .now()
        perform(machine.received(bytes))
    }

    func connection(_ connection: Connection, writabilityChanged isWritable: Bool) {
        pausedForBackpressure = !isWritable
        updateReading()
        subscriptions?.writabilityChanged(isWritable)
    }

    func connectionDidClose(_ connection: Connection, error: SystemError?) {
        idleTimer?.cancel()
        idleTimer = nil
        subscriptions?.closeAll()
        subscriptions = nil
        self.connection = nil
        if let error { ServerLog.warning("connection \(id) from \(connection.remoteAddress) failed: \(error)") }
    }

    private func perform(_ actions: [ConnectionStateMachine.Action]) {
        guard let connection else { return }
        if let delay = refusalDelay.delay {
            // A refused hello: answer later, without holding the loop; the machine reads nothing more meanwhile.
            refusalDelay.delay = nil
            connection.pauseReading()
            _ = connection.loop.schedule(after: delay) { [self] in perform(actions) }
            return
        }
        for action in actions {
            switch action {
            case .write(let bytes):
                connection.write(bytes)
            case .dispatch(let requestID, let message, let identity):
                dispatch(requestID: requestID, message: message, identity: identity)
            case .close(let reason):
                ServerLog.info("closing connection \(id) from \(connection.remoteAddress): \(reason)")
                connection.closeAfterFlush()
            }
        }
        updateReading()
    }

    private func dispatch(requestID: UInt32, message: Message, identity: ClientIdentity) {
        guard let connection else { return }
        let dispatcher = server.dispatcher
        let authorize: ConnectionSubscriptions.Authorizer = { request in
            try dispatcher.authorizedSubscription(request, identity: identity)
        }
        if subscriptions?.handle(message, requestID: requestID, authorize: authorize) == true { return }
        let loop = connection.loop
        let accepted = server.workers.submit { [self] in
            let replies = dispatcher.handle(message, identity: identity)
            let bytes = Self.encode(replies, requestID: requestID)
            let revoked = replies.count == 1 && replies[0].isTokenRevoked
            _ = loop.execute {
                self.finish(bytes)
                if revoked, let connection = self.connection {
                    ServerLog.info("closing connection \(self.id) from \(connection.remoteAddress): identity \"\(identity.name)\" was revoked")
                    connection.closeAfterFlush()
                }
            }
        }
        if !accepted {
            let busy = HealthError(.busy, "the server is busy (worker queue full); retry later")
            finish(Self.encode([.error(ErrorReply(busy))], requestID: requestID))
        }
    }

    /// Writes a completed request's reply and lets the state machine release buffered requests.
    private func finish(_ bytes: [UInt8]) {
        lastActivity = .now()
        connection?.write(bytes)
        perform(machine.requestCompleted())
    }

    private static func encode(_ replies: [Message], requestID: UInt32) -> [UInt8] {
        let encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for (index, reply) in replies.enumerated() {
            let flags: FrameFlags = index < replies.count - 1 ? [.more] : []
            encoder.encode(reply.frame(requestID: requestID, flags: flags), into: &bytes)
        }
        return bytes
    }

    /// Reading pauses while the pipelining limit is reached or replies pile up unread by the client.
    private func updateReading() {
        guard let connection, connection.isOpen else { return }
        pausedForPipelining = !machine.wantsToRead
        let shouldPause = pausedForPipelining || pausedForBackpressure
        if shouldPause, !connection.isReadingPaused {
            connection.pauseReading()
        } else if !shouldPause, connection.isReadingPaused {
            connection.resumeReading()
        }
    }

    private func armIdleTimer() {
        let seconds = server.configuration.idleTimeoutSeconds
        guard seconds > 0, let connection else { return }
        let timeout = Duration.seconds(Int64(clamping: seconds))
        idleTimer = connection.loop.schedule(after: timeout) { [self] in
            guard self.connection != nil else { return }
            let idleFor = Deadline.now().nanoseconds &- self.lastActivity.nanoseconds
            // A connection holding subscriptions waits for updates: it is never idle.
            if machine.inFlight == 0, subscriptions?.isEmpty ?? true, idleFor >= UInt64(clamping: seconds) * 1_000_000_000 {
                perform(machine.terminate(HealthError(.idleTimeout, "the connection was idle for \(seconds) s")))
            } else {
                armIdleTimer()
            }
        }
    }
}

/// A refused hello's delay, handed from the authenticator (run inside the state machine) to the connection.
/// Loop-confined like ``ServerConnection``.
final class RefusalDelay: @unchecked Sendable {
    var delay: Duration?
}

extension Message {
    /// Whether this is the refusal of a request from a revoked identity.
    var isTokenRevoked: Bool {
        if case .error(let reply) = self { return reply.code == ErrorCode.tokenRevoked.rawValue }
        return false
    }
}
