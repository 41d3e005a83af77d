import HealthWire

extension Request {
    /// The reply among `replies`: exactly one message, of type ``Request/Reply``; otherwise the error that
    /// says what came instead.
    static func reply(in replies: [Message]) throws(HealthClientError) -> Reply {
        guard replies.count == 1 else {
            throw .local(.malformedPayload, "expected one reply to \(kind), got \(replies.count)")
        }
        return try typed(replies[0])
    }

    /// `reply` as this request's ``Request/Reply``, or the error naming what the server sent instead.
    static func typed(_ reply: Message) throws(HealthClientError) -> Reply {
        guard let typed = reply.body as? Reply else {
            throw .local(.malformedPayload, "the server answered \(kind) with \(reply.kind)")
        }
        return typed
    }
}

extension StreamedRequest {
    /// Every frame of a streamed answer, each of type ``Request/Reply``.
    static func replies(in replies: [Message]) throws(HealthClientError) -> [Reply] {
        try replies.map { reply throws(HealthClientError) in try typed(reply) }
    }
}
