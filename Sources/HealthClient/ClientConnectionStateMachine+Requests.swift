import HealthModel
import HealthWire

extension ClientConnectionStateMachine {
    /// A request is to be sent at `now`: the frame to send under a fresh request id, or, on a connection that has
    /// ended, the failure of `waiter`. With `subscriber` it is a subscribe request, whose `subscribed` reply makes
    /// `subscriber` the receiver of the subscription's updates.
    mutating func request(_ message: Message, waiter: Waiter, subscriber: Subscriber? = nil, now: Instant)
        -> [Action]
    {
        switch state {
        case .closed(let failure):
            return [.fail(waiter, failure)]
        case .connecting, .handshaking:
            return [.fail(waiter, .local(.internalError, "a request was sent before the handshake completed"))]
        case .established:
            break
        }
        var id = nextRequestID
        // Once the ids wrapped around, skip those still waiting for frames.
        while pending[id] != nil || abandoned.contains(id) { id = Self.after(id) }
        nextRequestID = Self.after(id)
        pending[id] = Pending(waiter: waiter, deadline: now + configuration.requestTimeout, subscriber: subscriber)
        return [.send(message, requestID: id)]
    }

    /// The request id that follows `id` (0 is never used: it is the handshake's and the heartbeat's).
    private static func after(_ id: UInt32) -> UInt32 { id == .max ? 1 : id + 1 }

    /// Forgets a subscription: none of its updates is delivered from now on, and the end of the connection is
    /// not reported to it.
    mutating func unsubscribe(_ subscriptionID: UInt32) {
        subscriptions[subscriptionID] = nil
    }

    /// The earliest instant at which ``tick(now:)`` may have something to do: a request's deadline, or the
    /// heartbeat's next check while subscriptions are held; `nil` when nothing runs against the clock.
    var nextDeadline: Instant? {
        guard case .established = state else { return nil }
        var next = pending.values.lazy.map(\.deadline).min()
        if !subscriptions.isEmpty, let beat = heartbeat?.deadline { next = min(next ?? beat, beat) }
        return next
    }

    /// Checks every deadline at `now`: requests past theirs fail with ``ErrorCode/timedOut`` (the others carry
    /// on, and a late reply to one is dropped); a server silent for the heartbeat's interval is pinged, and one
    /// silent for twice as long is given up.
    mutating func tick(now: Instant) -> [Action] {
        guard case .established = state else { return [] }
        var actions: [Action] = []
        for id in pending.filter({ $0.value.deadline <= now }).keys.sorted() {
            guard let request = pending.removeValue(forKey: id) else { continue }
            abandoned.insert(id)
            actions.append(
                .fail(request.waiter, .local(.timedOut, "no reply within \(configuration.requestTimeout)")))
        }
        switch heartbeat?.check(now: now, subscribed: !subscriptions.isEmpty) ?? .quiet {
        case .quiet:
            break
        case .ping:
            actions.append(.sendControl(.ping(Ping(nonce: Self.keepAliveNonce)), requestID: 0))
        case .lost(let silence):
            actions += fail(.local(.connectionLost, "the server sent nothing for \(silence), not even a pong"))
        }
        return actions
    }
}
