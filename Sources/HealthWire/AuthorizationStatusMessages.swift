import HealthCodec
import HealthModel

/// Asks for the sharing authorization status of types (HEALTHKIT.md §10), for one subject or for the identity in
/// general. Answered by ``AuthorizationStatus``.
public struct AuthorizationStatusQuery: WireMessage {
    public static let kind = MessageKind.authorizationStatusQuery
    public var types: [String]
    /// The subject the status is for (an identity may write a type for some subjects only); empty: in general.
    /// On the wire only when not empty, after the types, so older payloads still decode.
    public var subject: String

    public init(types: [String], subject: String = "") {
        self.types = types
        self.subject = subject
    }

    public func encode(into w: inout ByteWriter) {
        w.writeStrings(types)
        if !subject.isEmpty { w.writeString(subject) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        types = try r.readStrings("type", limits: limits)
        subject = r.remaining > 0 ? try r.readString(limits) : ""
    }
}

/// Sharing status per requested type, in request order. Read access is never revealed.
public struct AuthorizationStatus: WireMessage {
    public static let kind = MessageKind.authorizationStatus
    public var statuses: [TypeAuthorization]

    /// One type's sharing status.
    public struct TypeAuthorization: Hashable, Sendable {
        public var type: String
        public var state: AuthorizationState
        public init(type: String, state: AuthorizationState) {
            self.type = type
            self.state = state
        }
    }

    public init(statuses: [TypeAuthorization]) { self.statuses = statuses }

    public func encode(into w: inout ByteWriter) {
        w.writeVarint(UInt64(statuses.count))
        for status in statuses {
            w.writeString(status.type)
            w.write(status.state.rawValue)
        }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        let count = try r.readListCount("type status", limits: limits, minBytes: 2)
        var statuses: [TypeAuthorization] = []
        statuses.reserveCapacity(count)
        for _ in 0..<count {
            statuses.append(
                TypeAuthorization(
                    type: try r.readString(limits),
                    state: try r.readEnum(AuthorizationState.self, "authorization state")))
        }
        self.statuses = statuses
    }
}
