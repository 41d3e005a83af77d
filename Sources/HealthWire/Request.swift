/// A message a client sends, naming the message that answers it (RediStack's `RedisCommand<ResultType>` is the
/// model): the server replies with one `Reply` frame, or with an ``ErrorReply``.
///
/// Conformances are declared in Requests.swift, one per kind: its reply, its placement and its checks. The
/// registry derives ``MessageKind/isRequest`` and ``MessageKind/replyKind`` from them, `HealthClient.send(_:)` its
/// return type, and the server (HealthServer's `ServedRequest`) adds each kind's authorization rule and handler.
public protocol Request: WireMessage {
    /// The message that answers this request.
    associatedtype Reply: WireMessage
    /// The request checked and typed: what the server's handler takes.
    associatedtype Checked: Sendable

    /// The subject whose partition must serve this request in cluster mode: the subject of a change, of a query
    /// of one subject or of a subscription; `nil` for requests about no subject or every subject (server info,
    /// authorization status, administration, backups, cluster status), which any node answers. The server checks
    /// it against the partitions it owns; HealthClient routes by it.
    var placedSubject: String? { get }

    /// The request checked as the server checks it before any work is queued, with its names resolved: the
    /// sample type exists, units parse and fit it, predicates and options are valid, values are in range.
    /// Throws the ``HealthError`` the request deserves (``ErrorCode/unknownQuantityType``,
    /// ``ErrorCode/invalidUnit``, ``ErrorCode/incompatibleUnit``, ``ErrorCode/invalidPredicate``, …).
    func checked() throws -> Checked
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
