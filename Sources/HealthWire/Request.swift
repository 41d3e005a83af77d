/// A message a client sends, naming the message that answers it (RediStack's `RedisCommand<ResultType>` is the
/// model): the server replies with one `Reply` frame, or with an ``ErrorReply``.
///
/// Conformances are declared in MessageRegistry.swift, next to the kinds; the registry derives
/// ``MessageKind/isRequest`` and ``MessageKind/replyKind`` from them, and `HealthClient.send(_:)` its return type.
public protocol Request: WireMessage {
    /// The message that answers this request.
    associatedtype Reply: WireMessage
}

/// A request whose answer may span several `Reply` frames, all but the last with ``FrameFlags/more``
/// (`HealthClient.sendStreamed(_:)` collects them).
public protocol StreamedRequest: Request {}

extension Request {
    /// ``Reply``, as a value (for the registry, which handles requests as existentials).
    public static var replyType: (any WireMessage.Type)? { Reply.self }
}

extension StreamedRequest {
    public static var streamsReplies: Bool { true }
}
