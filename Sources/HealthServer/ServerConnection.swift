import HealthModel
import HealthPosix
import HealthWire

/// Binds one TCP connection to its ``ConnectionStateMachine``: feeds it bytes and the time, performs its actions,
/// runs dispatched requests on the worker pool and writes their replies back on the connection's loop.
///
/// Memory: the frame being received holds its declared length in the server's ``MemoryBudget`` (reading pauses
/// until it fits), and a decoded payload holds its inflated size while its request runs.
///
/// Loop-confined: every method runs on the connection's event-loop thread (worker results hop back with
/// `loop.execute`), hence `@unchecked Sendable`.
final class ServerConnection: ConnectionHandler, @unchecked Sendable {
    private var machine: ConnectionStateMachine
    private let server: HealthServer
    private let id: UInt64
    private var connection: Connection?
    /// The timer that calls the machine's `tick` at its next deadline, and the deadline it was armed for.
    private var deadlineTimer: ScheduledTask?
    private var armedDeadline: ContinuousClock.Instant?
    private var pausedForPipelining = false
    private var pausedForBackpressure = false
    private var pausedForBudget = false
    /// Budget bytes reserved for the frame being received.
    private var reservedForFrame = 0
    /// Whether this connection counts against the server's quota of connections still in their handshake.
    private var countedAsHandshaking = false
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
            deadlines: server.configuration.deadlines,
            authenticator: ThrottledAuthenticator(
                base: server.authenticator, throttle: server.failures, peer: peer, refusalDelay: refusalDelay))
    }

    func connectionDidOpen(_ connection: Connection) {
        self.connection = connection
        // The subscriptions may outlive this object by a worker job or a timer: they hold it weakly.
        subscriptions = ConnectionSubscriptions(
            hub: server.subscriptions, store: server.store, workers: server.workers, loop: connection.loop,
            timeout: .seconds(Int64(clamping: server.configuration.subscriberTimeoutSeconds)),
            isOpen: { [weak self] in self?.connection?.isOpen ?? false },
            isWritable: { [weak self] in self?.connection?.isWritable ?? false },
            write: { [weak self] in self?.connection?.write($0) }, complete: { [weak self] in self?.finish($0) },
            terminate: { [weak self] in
                guard let self else { return }
                self.perform(self.machine.terminate($0))
            },
            forceClose: { [weak self] in self?.connection?.close() })
        countedAsHandshaking = true
        if server.handshaking.add(1, ordering: .relaxed).newValue > server.configuration.maxHandshakingConnections {
            let limit = server.configuration.maxHandshakingConnections
            return perform(
                machine.terminate(
                    HealthError(.tooManyConnections, "\(limit) connections are already in their handshake; retry later")))
        }
        perform([])
    }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        perform(machine.received(bytes, now: .now))
    }

    func connection(_ connection: Connection, writabilityChanged isWritable: Bool) {
        pausedForBackpressure = !isWritable
        machine.writabilityChanged(isWritable, now: .now)
        perform([])
        subscriptions?.writabilityChanged(isWritable)
    }

    func connectionDidClose(_ connection: Connection, error: SystemError?) {
        deadlineTimer?.cancel()
        deadlineTimer = nil
        leaveHandshakeQuota()
        server.budget.release(reservedForFrame)
        reservedForFrame = 0
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
            case .decode(let frame, let identity):
                decode(frame, identity: identity)
            case .close(let reason):
                ServerLog.info("closing connection \(id) from \(connection.remoteAddress): \(reason)")
                connection.closeAfterFlush()
            case .abort(let reason):
                ServerLog.info("closing connection \(id) from \(connection.remoteAddress) at once: \(reason)")
                connection.close()
            }
        }
        guard self.connection != nil else { return }
        if machine.isEstablished { leaveHandshakeQuota() }
        reserveForPendingFrame()
        updateReading()
        armDeadlineTimer()
    }

    private func leaveHandshakeQuota() {
        guard countedAsHandshaking else { return }
        countedAsHandshaking = false
        server.handshaking.subtract(1, ordering: .relaxed)
    }

    /// Holds the budget for the frame being received: its declared length once the header arrived; released
    /// when the frame is complete (a decoded request then holds its own bytes).
    private func reserveForPendingFrame() {
        let pending = machine.pendingPayloadLength ?? 0
        if pending == reservedForFrame {
            pausedForBudget = false
            return
        }
        server.budget.release(reservedForFrame)
        reservedForFrame = 0
        if server.budget.tryReserve(pending) {
            reservedForFrame = pending
            pausedForBudget = false
        } else if !pausedForBudget {
            // Spent: stop reading and try again shortly (bytes come back as other requests finish).
            pausedForBudget = true
            _ = connection?.loop.schedule(after: .milliseconds(5)) { [weak self] in
                guard let self, self.pausedForBudget else { return }
                self.pausedForBudget = false
                self.perform([])
            }
        }
    }

    /// Inflates and decodes a large or compressed frame on a worker, holding its inflated size in the budget
    /// while its request runs.
    private func decode(_ frame: Frame, identity: ClientIdentity) {
        guard let connection else { return }
        let loop = connection.loop
        let limits = server.configuration.sessionLimits
        let budget = server.budget
        let held = FrameDecoder.declaredInflatedLength(frame) ?? frame.payload.count
        guard budget.tryReserve(held) else {
            let busy = HealthError(.busy, "the server holds its limit of request bytes in memory; retry later")
            return perform(machine.refused(frame, busy))
        }
        let accepted = server.workers.submit { [self] in
            let outcome = ConnectionStateMachine.decodeRequest(frame, limits: limits)
            _ = loop.execute {
                guard self.connection != nil else { return budget.release(held) }
                self.heldForNextDispatch = held
                self.perform(self.machine.decoded(outcome, frame: frame, identity: identity))
                budget.release(self.heldForNextDispatch)
                self.heldForNextDispatch = 0
            }
        }
        if !accepted {
            budget.release(held)
            let busy = HealthError(.busy, "the server is busy (worker queue full); retry later")
            perform(machine.refused(frame, busy))
        }
    }

    /// Budget bytes of the decoded frame whose actions are being performed, handed to its dispatch.
    private var heldForNextDispatch = 0

    private func dispatch(requestID: UInt32, message: Message, identity: ClientIdentity) {
        guard let connection else { return }
        let dispatcher = server.dispatcher
        let authorize: ConnectionSubscriptions.Authorizer = { request in
            try dispatcher.authorizedSubscription(request, identity: identity)
        }
        if subscriptions?.handle(message, requestID: requestID, authorize: authorize) == true { return }
        let loop = connection.loop
        let budget = server.budget
        // The decoded payload stays in memory until the request is done: its budget goes with the job.
        let held = heldForNextDispatch
        heldForNextDispatch = 0
        let accepted = server.workers.submit { [self] in
            let replies = dispatcher.handle(message, identity: identity)
            budget.release(held)
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
            budget.release(held)
            let busy = HealthError(.busy, "the server is busy (worker queue full); retry later")
            finish(Self.encode([.error(ErrorReply(busy))], requestID: requestID))
        }
    }

    /// Writes a completed request's reply and lets the state machine release buffered requests.
    private func finish(_ bytes: [UInt8]) {
        connection?.write(bytes)
        perform(machine.requestCompleted(now: .now))
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

    /// Reading pauses while the pipelining limit is reached, replies pile up unread by the client, or the
    /// server's memory budget is spent.
    private func updateReading() {
        guard let connection, connection.isOpen else { return }
        pausedForPipelining = !machine.wantsToRead
        let shouldPause = pausedForPipelining || pausedForBackpressure || pausedForBudget
        if shouldPause, !connection.isReadingPaused {
            connection.pauseReading()
        } else if !shouldPause, connection.isReadingPaused {
            connection.resumeReading()
        }
    }

    /// Arms the timer for the machine's next deadline, unless one is armed for an earlier instant (a timer
    /// that fires early finds nothing due and re-arms).
    private func armDeadlineTimer() {
        machine.holdsSubscriptions = !(subscriptions?.isEmpty ?? true)
        guard let connection, let next = machine.nextDeadline else { return }
        if let armed = armedDeadline, armed <= next, deadlineTimer != nil { return }
        deadlineTimer?.cancel()
        armedDeadline = next
        let delay = max(next - .now, .zero)
        deadlineTimer = connection.loop.schedule(after: delay) { [weak self] in
            guard let self, self.connection != nil else { return }
            self.deadlineTimer = nil
            self.armedDeadline = nil
            self.machine.holdsSubscriptions = !(self.subscriptions?.isEmpty ?? true)
            self.perform(self.machine.tick(now: .now))
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
