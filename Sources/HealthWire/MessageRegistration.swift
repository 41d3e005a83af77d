import HealthCodec
import HealthModel

/// What the registry knows of one ``MessageKind``: its message type, whether it is a request and what answers
/// it, and how its payload becomes a ``Message``. Built from the `Message` case that carries the type, so the
/// kind, the type and the case cannot disagree.
struct MessageRegistration: Sendable {
    /// The message type of the kind.
    let type: any WireMessage.Type
    /// For a request, the type of its reply; `nil` for every other message.
    let replyType: (any WireMessage.Type)?
    /// Whether the reply may span several frames (a ``StreamedRequest``).
    let streamsReplies: Bool
    /// Decodes a whole payload (trailing bytes rejected) and wraps it in its case.
    let decode: @Sendable (_ payload: [UInt8], _ limits: MessageLimits) throws -> Message
    /// Wraps a value of ``type`` in its case; `nil` for a value of another type.
    let wrap: @Sendable (any WireMessage) -> Message?

    /// The registration of `M`, whose values `wrap` puts in their `Message` case.
    init<M: WireMessage>(_ wrap: @escaping @Sendable (M) -> Message) {
        type = M.self
        replyType = M.replyType
        streamsReplies = M.streamsReplies
        decode = { payload, limits in wrap(try M(payload: payload, limits: limits)) }
        self.wrap = { body in (body as? M).map(wrap) }
    }

    /// Every kind's registration at its raw value: built at first use, then read without a lock. An array, not
    /// a dictionary: a dictionary keyed by the kind looks up its Hashable conformance at run time, a scan of every
    /// conformance record.
    private static let table: [MessageRegistration?] = {
        var table = [MessageRegistration?](repeating: nil, count: Int(UInt8.max) + 1)
        for kind in MessageKind.allCases { table[Int(kind.rawValue)] = kind.registration }
        return table
    }()

    /// The registration of `kind`.
    static subscript(kind: MessageKind) -> MessageRegistration {
        // Every kind is registered: `registration` is an exhaustive switch.
        table[Int(kind.rawValue)]!
    }
}

extension MessageKind {
    /// Whether a client sends this kind and the server answers it (the type conforms to ``Request``).
    public var isRequest: Bool { MessageRegistration[self].replyType != nil }

    /// The kind of the message answering this request; `nil` unless ``isRequest``.
    public var replyKind: MessageKind? { MessageRegistration[self].replyType?.kind }

    /// Whether the answer to this request may span several frames (a ``StreamedRequest``).
    public var streamsReplies: Bool { MessageRegistration[self].streamsReplies }

    /// The message type of this kind.
    public var messageType: any WireMessage.Type { MessageRegistration[self].type }
}
