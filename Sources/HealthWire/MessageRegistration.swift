import HealthCodec
import HealthModel
import Synchronization

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

    /// The registrations built so far, at their kind's raw value. Each is built at its kind's first use: a
    /// short-lived hkq uses three kinds, and building all of them (two closures and a type's metadata each, their
    /// code spread over the binary) cost it a tenth of a millisecond. An array, not a dictionary: a dictionary
    /// keyed by the kind looks up its Hashable conformance at run time, a scan of every conformance record.
    private static let built = Mutex([MessageRegistration?](repeating: nil, count: Int(UInt8.max) + 1))

    /// The registration of `kind`.
    static subscript(kind: MessageKind) -> MessageRegistration {
        built.withLock { built in
            if let registration = built[Int(kind.rawValue)] { return registration }
            let registration = kind.registration
            built[Int(kind.rawValue)] = registration
            return registration
        }
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
