import HealthCodec
import HealthModel

/// Asks for the source priority order of one type for one subject. Answered by ``SourcePriority``.
public struct GetSourcePriority: WireMessage {
    public static let kind = MessageKind.getSourcePriority
    public var subject: String
    public var type: String

    public init(subject: String, type: String) {
        self.subject = subject
        self.type = type
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeString(type)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        type = try r.readString(limits)
    }
}

/// The sources of one type for one subject, highest priority first (HEALTHKIT.md §8).
public struct SourcePriority: WireMessage {
    public static let kind = MessageKind.sourcePriority
    public var subject: String
    public var type: String
    public var sources: [SourceInfo]

    public init(subject: String, type: String, sources: [SourceInfo]) {
        self.subject = subject
        self.type = type
        self.sources = sources
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeString(type)
        w.writeSources(sources)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        type = try r.readString(limits)
        sources = try r.readSources(limits)
    }
}

/// Sets the priority order: the named sources (names or bundle ids) first, in this order; the others keep their
/// relative order after them. Answered by ``SourcePriority`` with the resulting order.
public struct SetSourcePriority: WireMessage {
    public static let kind = MessageKind.setSourcePriority
    public var subject: String
    public var type: String
    public var order: [String]

    public init(subject: String, type: String, order: [String]) {
        self.subject = subject
        self.type = type
        self.order = order
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeString(type)
        w.writeStrings(order)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        type = try r.readString(limits)
        order = try r.readStrings("source", limits: limits)
    }
}
