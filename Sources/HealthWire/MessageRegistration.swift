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

    /// Every kind's registration, built once, at the kind's raw value (an array, not a dictionary: building a
    /// dictionary keyed by the kind looks up its Hashable conformance at run time, a scan of every conformance
    /// record that costs a short-lived hkq about half a millisecond).
    static let all: [MessageRegistration?] = {
        var all = [MessageRegistration?](repeating: nil, count: Int(UInt8.max) + 1)
        for kind in MessageKind.allCases { all[Int(kind.rawValue)] = kind.registration }
        return all
    }()

    /// The registration of `kind`.
    static subscript(kind: MessageKind) -> MessageRegistration {
        guard let registration = all[Int(kind.rawValue)] else { preconditionFailure("\(kind) has no registration") }
        return registration
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
