import HealthModel
import HealthPosix
import HealthWire

/// Binds one TCP connection to its ``ConnectionStateMachine``: feeds it bytes and the time, performs its actions,
/// runs dispatched requests on the worker pool and writes their replies back on the connection's loop.
///
/// Memory: the frame being received holds its declared length in the server's ``MemoryBudget`` (reading pauses
/// until it fits), and a decoded payload holds its inflated size while its request runs.
///
/// Threading: every method runs on the connection's event-loop thread; the mutable state lives in a
/// ``LoopBoundBox`` that checks so on each access. Worker jobs touch none of it: they hop back with
/// `loop.execute` before they do.
final class ServerConnection: ConnectionHandler, Sendable {
    /// Everything that changes over the connection's life (loop thread only).
    private struct State {
        var machine: ConnectionStateMachine
        var connection: Connection?
        /// The timer that calls the machine's `tick` at its next deadline, and the deadline it was armed for.
        var deadlineTimer: ScheduledTask?
        var armedDeadline: ContinuousClock.Instant?
        var pausedForPipelining = false
        var pausedForBackpressure = false
        var pausedForBudget = false
        /// Budget bytes reserved for the frame being received.
        var reservedForFrame = 0
        /// Budget bytes of the decoded frame whose actions are being performed, handed to its dispatch.
        var heldForNextDispatch = 0
        /// Whether this connection counts against the server's quota of connections still in their handshake.
        var countedAsHandshaking = false
        var subscriptions: ConnectionSubscriptions?
        /// Whether bytes arrived yet (the first is checked for a TLS hello on a plaintext listener).
        var readAny = false
    }

    private let state: LoopBoundBox<State>
    private let server: HealthServer
    private let id: UInt64
    /// The peer's host, for the failure throttle.
    private let peer: String
    /// Set by a failed hello: how long the refusal waits (see ``FailureThrottle``).
    private let refusalDelay: RefusalDelay

    /// A handler for a connection owned by `loop`.
    init(server: HealthServer, id: UInt64, peer: String, loop: EventLoop) {
        self.server = server
        self.id = id
        self.peer = peer
        let refusalDelay = RefusalDelay(loop: loop)
        self.refusalDelay = refusalDelay
        var machine = ConnectionStateMachine(
            limits: server.configuration.sessionLimits, serverVersion: HealthServer.version, connectionID: id,
            deadlines: server.configuration.deadlines,
            authenticator: ThrottledAuthenticator(
                base: server.authenticator, throttle: server.failures, peer: peer, refusalDelay: refusalDelay,
                failures: server.metrics.authenticationFailures))
        let metrics = server.metrics
        machine.onError = { metrics.recordError($0) }
        self.state = LoopBoundBox(State(machine: machine), loop: loop)
    }

    func connectionDidOpen(_ connection: Connection) {
        precondition(connection.loop === state.loop, "ServerConnection opened on another loop than its own")
        state.value.connection = connection
        // The subscriptions may outlive this object by a worker job or a timer: they hold it weakly.
        let subscriptions = ConnectionSubscriptions(
            hub: server.subscriptions, store: server.store, workers: server.workers, loop: connection.loop,
            timeout: .seconds(Int64(clamping: server.configuration.subscriberTimeoutSeconds)),
            isOpen: { [weak self] in self?.state.value.connection?.isOpen ?? false },
            isWritable: { [weak self] in self?.state.value.connection?.isWritable ?? false },
            write: { [weak self] in self?.state.value.connection?.write($0) },
            complete: { [weak self] in self?.finish($0) },
            terminate: { [weak self] in
                guard let self else { return }
                self.perform(self.state.value.machine.terminate($0))
            },
            forceClose: { [weak self] in self?.state.value.connection?.close() })
        state.value.subscriptions = subscriptions
        state.value.countedAsHandshaking = true
        let loop = connection.loop
        let quota = server.handshakes
        let eviction = quota.enter(id) { [weak self] in
            let target = self
            _ = loop.execute {
                guard let self = target else { return }
                let error = HealthError(
                    .tooManyConnections,
                    "\(quota.limit) connections are in their handshake and this one lingered longest; retry")
                self.perform(self.state.value.machine.terminate(error))
            }
        }
        eviction?()
        perform([])
    }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        if !state.value.readAny, !bytes.isEmpty {
            state.value.readAny = true
            // A TLS record (0x16, a ClientHello) where plaintext frames ("HK") were expected: say so in plaintext.
            if bytes[0] == 0x16, !server.usesTLS {
                ServerLog.info(
                    "closing connection \(id) from \(connection.remoteAddress): a TLS hello on the plaintext port")
                connection.write(HealthServer.tlsOnPlaintextRefusal)
                connection.closeAfterFlush()
                return
            }
        }
        perform(state.value.machine.received(bytes, now: .now))
    }

    func connection(_ connection: Connection, writabilityChanged isWritable: Bool) {
        state.value.pausedForBackpressure = !isWritable
        state.value.machine.writabilityChanged(isWritable, now: .now)
        perform([])
        let subscriptions = state.value.subscriptions
        subscriptions?.writabilityChanged(isWritable)
    }

    func connectionDidClose(_ connection: Connection, error: SystemError?) {
        state.value.deadlineTimer?.cancel()
        state.value.deadlineTimer = nil
        leaveHandshakeQuota()
        server.budget.release(state.value.reservedForFrame)
        state.value.reservedForFrame = 0
        let subscriptions = state.value.subscriptions
        subscriptions?.closeAll()
        state.value.subscriptions = nil
        state.value.connection = nil
        if let error { ServerLog.warning("connection \(id) from \(connection.remoteAddress) failed: \(error)") }
    }

    private func perform(_ actions: [ConnectionStateMachine.Action]) {
        guard let connection = state.value.connection else { return }
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
            case .dispatch(let requestID, let request, let identity):
                dispatch(requestID: requestID, request: request, identity: identity)
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
        guard state.value.connection != nil else { return }
        if state.value.machine.isEstablished { leaveHandshakeQuota() }
        reserveForPendingFrame()
        updateReading()
        armDeadlineTimer()
    }

    private func leaveHandshakeQuota() {
        guard state.value.countedAsHandshaking else { return }
        state.value.countedAsHandshaking = false
        server.handshakes.leave(id)
    }

    /// Holds the budget for the frame being received: its declared length once the header arrived; released
    /// when the frame is complete (a decoded request then holds its own bytes).
    private func reserveForPendingFrame() {
        let pending = state.value.machine.pendingPayloadLength ?? 0
        let reserved = state.value.reservedForFrame
        if pending == reserved {
            state.value.pausedForBudget = false
            return
        }
        server.budget.release(reserved)
        state.value.reservedForFrame = 0
        if server.budget.tryReserve(pending) {
            state.value.reservedForFrame = pending
            state.value.pausedForBudget = false
        } else if !state.value.pausedForBudget {
            // Spent: stop reading and try again shortly (bytes come back as other requests finish).
            state.value.pausedForBudget = true
            _ = state.loop.schedule(after: .milliseconds(5)) { [weak self] in
                guard let self, self.state.value.pausedForBudget else { return }
                self.state.value.pausedForBudget = false
                self.perform([])
            }
        }
    }

    /// Inflates and decodes a large or compressed frame on a worker, holding its inflated size in the budget
    /// while its request runs.
    private func decode(_ frame: Frame, identity: ClientIdentity) {
        guard state.value.connection != nil else { return }
        let loop = state.loop
        let limits = server.configuration.sessionLimits
        let budget = server.budget
        let held = FrameDecoder.declaredInflatedLength(frame) ?? frame.payload.count
        guard budget.tryReserve(held) else {
            let busy = HealthError(.busy, "the server holds its limit of request bytes in memory; retry later")
            return perform(state.value.machine.refused(frame, busy))
        }
        // On the worker: no state, only the decoding; the result hops back to the loop.
        let accepted = server.workers.submit { [self] in
            let outcome = ConnectionStateMachine.decodeRequest(frame, limits: limits)
            _ = loop.execute {
                guard self.state.value.connection != nil else { return budget.release(held) }
                self.state.value.heldForNextDispatch = held
                self.perform(self.state.value.machine.decoded(outcome, frame: frame, identity: identity))
                budget.release(self.state.value.heldForNextDispatch)
                self.state.value.heldForNextDispatch = 0
            }
        }
        if !accepted {
            budget.release(held)
            let busy = HealthError(.busy, "the server is busy (worker queue full); retry later")
            perform(state.value.machine.refused(frame, busy))
        }
    }

    private func dispatch(requestID: UInt32, request: PreparedRequest, identity: ClientIdentity) {
        let message = request.message
        guard state.value.connection != nil else { return }
        let dispatcher = server.dispatcher
        let metrics = server.metrics
        let authorize: ConnectionSubscriptions.Authorizer = { request in
            try dispatcher.authorizedSubscription(request, identity: identity)
        }
        let subscriptions = state.value.subscriptions
        if subscriptions?.handle(message, requestID: requestID, authorize: authorize) == true { return }
        let loop = state.loop
        let budget = server.budget
        // The decoded payload stays in memory until the request is done: its budget goes with the job.
        let held = state.value.heldForNextDispatch
        state.value.heldForNextDispatch = 0
        // On the worker: the request and its encoding, no state; the reply hops back to the loop.
        let accepted = server.workers.submit { [self] in
            let started = Deadline.now()
            let replies = dispatcher.handle(request, identity: identity)
            metrics.record(message, replies: replies, since: started)
            if replies.count == 1, case .error(let refusal) = replies[0], (300..<400).contains(refusal.code) {
                ServerLog.warning("refused \(message.kind) of identity \"\(identity.name)\": \(refusal.message)")
            }
            budget.release(held)
            let bytes = FrameEncoder().encode(replies: replies, requestID: requestID)
            let revoked = replies.count == 1 && replies[0].isTokenRevoked
            _ = loop.execute {
                self.finish(bytes)
                if revoked, let connection = self.state.value.connection {
                    ServerLog.info(
                        "closing connection \(self.id) from \(connection.remoteAddress): identity \"\(identity.name)\" was revoked"
                    )
                    connection.closeAfterFlush()
                }
            }
        }
        if !accepted {
            budget.release(held)
            let busy = HealthError(.busy, "the server is busy (worker queue full); retry later")
            finish(FrameEncoder().encode(replies: [.error(ErrorReply(busy))], requestID: requestID))
        }
    }

    /// Writes a completed request's reply and lets the state machine release buffered requests.
    private func finish(_ bytes: [UInt8]) {
        state.value.connection?.write(bytes)
        perform(state.value.machine.requestCompleted(now: .now))
    }

    /// Reading pauses while the pipelining limit is reached, replies pile up unread by the client, or the
    /// server's memory budget is spent.
    private func updateReading() {
        guard let connection = state.value.connection, connection.isOpen else { return }
        let wantsToRead = state.value.machine.wantsToRead
        state.value.pausedForPipelining = !wantsToRead
        let shouldPause = !wantsToRead || state.value.pausedForBackpressure || state.value.pausedForBudget
        if shouldPause, !connection.isReadingPaused {
            connection.pauseReading()
        } else if !shouldPause, connection.isReadingPaused {
            connection.resumeReading()
        }
    }

    /// Arms the timer for the machine's next deadline, unless one is armed for an earlier instant (a timer
    /// that fires early finds nothing due and re-arms).
    private func armDeadlineTimer() {
        let holdsSubscriptions = !(state.value.subscriptions?.isEmpty ?? true)
        state.value.machine.holdsSubscriptions = holdsSubscriptions
        guard state.value.connection != nil, let next = state.value.machine.nextDeadline else { return }
        if let armed = state.value.armedDeadline, armed <= next, state.value.deadlineTimer != nil { return }
        state.value.deadlineTimer?.cancel()
        state.value.armedDeadline = next
        let delay = max(next - .now, .zero)
        state.value.deadlineTimer = state.loop.schedule(after: delay) { [weak self] in
            guard let self, self.state.value.connection != nil else { return }
            self.state.value.deadlineTimer = nil
            self.state.value.armedDeadline = nil
            let holdsSubscriptions = !(self.state.value.subscriptions?.isEmpty ?? true)
            self.state.value.machine.holdsSubscriptions = holdsSubscriptions
            self.perform(self.state.value.machine.tick(now: .now))
        }
    }
}

/// A refused hello's delay, handed from the authenticator (run inside the state machine, on the connection's
/// loop) to the connection. Loop-bound like ``ServerConnection``: read and set on that loop's thread only.
final class RefusalDelay: Sendable {
    private let state: LoopBoundBox<Duration?>

    init(loop: EventLoop) {
        state = LoopBoundBox(nil, loop: loop)
    }

    /// How long the pending refusal waits, if one is pending.
    var delay: Duration? {
        get { state.value }
        set { state.value = newValue }
    }
}

extension Message {
    /// Whether this is the refusal of a request from a revoked identity.
    var isTokenRevoked: Bool {
        if case .error(let reply) = self { return reply.code == ErrorCode.tokenRevoked.rawValue }
        return false
    }
}
