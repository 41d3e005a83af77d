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

/// Asks for the sharing authorization status of types (HEALTHKIT.md §10). Answered by ``AuthorizationStatus``.
public struct AuthorizationStatusQuery: WireMessage {
    public static let kind = MessageKind.authorizationStatusQuery
    public var types: [String]
    public init(types: [String]) { self.types = types }
    public func encode(into w: inout ByteWriter) { w.writeStrings(types) }
    public init(from r: inout ByteReader, limits: MessageLimits) throws { types = try r.readStrings("type", limits: limits) }
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
            statuses.append(TypeAuthorization(type: try r.readString(limits), state: try r.readEnum(AuthorizationState.self, "authorization state")))
        }
        self.statuses = statuses
    }
}

/// Asks for ``ServerInfo``. Empty payload.
public struct ServerInfoQuery: WireMessage {
    public static let kind = MessageKind.serverInfoQuery
    public init() {}
    public func encode(into w: inout ByteWriter) {}
    public init(from r: inout ByteReader, limits: MessageLimits) throws {}
}

/// The server's version, uptime, load and contents.
public struct ServerInfo: WireMessage {
    public static let kind = MessageKind.serverInfo
    public var serverVersion: String
    public var uptimeMicros: UInt64
    public var connections: UInt64
    /// Resident memory of the server process, in bytes.
    public var residentBytes: UInt64
    public var subjects: UInt64
    /// Stored samples per type, types without samples left out.
    public var samplesPerType: [TypeCount]

    /// The number of samples of one type.
    public struct TypeCount: Hashable, Sendable {
        public var type: String
        public var samples: UInt64
        public init(type: String, samples: UInt64) {
            self.type = type
            self.samples = samples
        }
    }

    public init(serverVersion: String, uptimeMicros: UInt64, connections: UInt64, residentBytes: UInt64, subjects: UInt64, samplesPerType: [TypeCount]) {
        self.serverVersion = serverVersion
        self.uptimeMicros = uptimeMicros
        self.connections = connections
        self.residentBytes = residentBytes
        self.subjects = subjects
        self.samplesPerType = samplesPerType
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(serverVersion)
        w.writeVarint(uptimeMicros)
        w.writeVarint(connections)
        w.writeVarint(residentBytes)
        w.writeVarint(subjects)
        w.writeVarint(UInt64(samplesPerType.count))
        for entry in samplesPerType {
            w.writeString(entry.type)
            w.writeVarint(entry.samples)
        }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        serverVersion = try r.readString(limits)
        uptimeMicros = try r.readVarint()
        connections = try r.readVarint()
        residentBytes = try r.readVarint()
        subjects = try r.readVarint()
        let count = try r.readListCount("type count", limits: limits, minBytes: 2)
        var entries: [TypeCount] = []
        entries.reserveCapacity(count)
        for _ in 0..<count { entries.append(TypeCount(type: try r.readString(limits), samples: try r.readVarint())) }
        samplesPerType = entries
    }
}
