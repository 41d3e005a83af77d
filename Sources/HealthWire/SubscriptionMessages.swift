import HealthCodec
import HealthModel

/// What a subscription watches (HEALTHKIT.md §7 live mode, §9).
public enum SubscriptionRequest: Hashable, Sendable {
    /// HKObserverQuery: "something matching changed", nothing more.
    case observer(subject: String, type: String, filter: SampleFilter)
    /// An anchored query that keeps running: the initial changes, then each later batch of changes.
    case anchored(ChangesQuery)
    /// A statistics collection with an update handler: the initial buckets, then the buckets that changed.
    case collection(CollectionQuery)
}

/// Starts a subscription on this connection. Answered by ``Subscribed``; updates then arrive as ``Update``
/// frames whose request id is the subscription id.
public struct Subscribe: WireMessage {
    public static let kind = MessageKind.subscribe
    public var request: SubscriptionRequest

    public init(_ request: SubscriptionRequest) { self.request = request }

    public func encode(into w: inout ByteWriter) {
        switch request {
        case .observer(let subject, let type, let filter):
            w.write(0)
            w.writeScope(subject: subject, type: type, filter: filter)
        case .anchored(let query):
            w.write(1)
            query.encode(into: &w)
        case .collection(let query):
            w.write(2)
            query.encode(into: &w)
        }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        switch try r.readByte() {
        case 0:
            let scope = try r.readScope(limits)
            request = .observer(subject: scope.subject, type: scope.type, filter: scope.filter)
        case 1: request = .anchored(try ChangesQuery(from: &r, limits: limits))
        case 2: request = .collection(try CollectionQuery(from: &r, limits: limits))
        case let other: throw CodecError(.malformedPayload, "unknown subscription kind \(other)")
        }
    }
}

/// Confirms a ``Subscribe``; updates for it carry `subscriptionID` as their request id.
public struct Subscribed: WireMessage {
    public static let kind = MessageKind.subscribed
    public var subscriptionID: UInt32
    public init(subscriptionID: UInt32) { self.subscriptionID = subscriptionID }
    public func encode(into w: inout ByteWriter) { w.writeLE(subscriptionID) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws { subscriptionID = try r.readLE(UInt32.self) }
}

/// Ends a subscription. Answered by ``Unsubscribed``; no update for it follows that answer.
public struct Unsubscribe: WireMessage {
    public static let kind = MessageKind.unsubscribe
    public var subscriptionID: UInt32
    public init(subscriptionID: UInt32) { self.subscriptionID = subscriptionID }
    public func encode(into w: inout ByteWriter) { w.writeLE(subscriptionID) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws { subscriptionID = try r.readLE(UInt32.self) }
}

/// Confirms an ``Unsubscribe``.
public struct Unsubscribed: WireMessage {
    public static let kind = MessageKind.unsubscribed
    public var subscriptionID: UInt32
    public init(subscriptionID: UInt32) { self.subscriptionID = subscriptionID }
    public func encode(into w: inout ByteWriter) { w.writeLE(subscriptionID) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws { subscriptionID = try r.readLE(UInt32.self) }
}

/// What a pushed ``Update`` carries.
public enum UpdateContent: Hashable, Sendable {
    /// Observer: something changed; the anchor of the newest change seen.
    case changed(anchor: UInt64)
    /// Anchored subscription: the changes since the previous update.
    case changes(ChangesResult)
    /// Live collection: the buckets the changes touched, recomputed (the initial update lists all buckets).
    case buckets(CollectionResult)
}

/// A frame the server pushes for a subscription; the frame's request id is the subscription id.
public struct Update: WireMessage {
    public static let kind = MessageKind.update
    public var content: UpdateContent

    public init(_ content: UpdateContent) { self.content = content }

    public func encode(into w: inout ByteWriter) {
        switch content {
        case .changed(let anchor):
            w.write(0)
            w.writeVarint(anchor)
        case .changes(let changes):
            w.write(1)
            changes.encode(into: &w)
        case .buckets(let buckets):
            w.write(2)
            buckets.encode(into: &w)
        }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        switch try r.readByte() {
        case 0: content = .changed(anchor: try r.readVarint())
        case 1: content = .changes(try ChangesResult(from: &r, limits: limits))
        case 2: content = .buckets(try CollectionResult(from: &r, limits: limits))
        case let other: throw CodecError(.malformedPayload, "unknown update kind \(other)")
        }
    }
}
