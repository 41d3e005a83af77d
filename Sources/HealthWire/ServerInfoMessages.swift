import HealthCodec
import HealthModel

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
    /// Bytes of the answering process's sealed blocks (compressed rows) held in its memory, and kept in cold
    /// segment files on disk (`hkd --memory-limit`); both 0 from a server that predates them.
    public var blockBytesInMemory: UInt64
    public var blockBytesOnDisk: UInt64

    /// The number of samples of one type.
    public struct TypeCount: Hashable, Sendable {
        public var type: String
        public var samples: UInt64
        public init(type: String, samples: UInt64) {
            self.type = type
            self.samples = samples
        }
    }

    public init(
        serverVersion: String, uptimeMicros: UInt64, connections: UInt64, residentBytes: UInt64, subjects: UInt64,
        samplesPerType: [TypeCount], blockBytesInMemory: UInt64 = 0, blockBytesOnDisk: UInt64 = 0
    ) {
        self.serverVersion = serverVersion
        self.uptimeMicros = uptimeMicros
        self.connections = connections
        self.residentBytes = residentBytes
        self.subjects = subjects
        self.samplesPerType = samplesPerType
        self.blockBytesInMemory = blockBytesInMemory
        self.blockBytesOnDisk = blockBytesOnDisk
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
        // An optional pair, written unless both are 0 (the payload of a server that predates them).
        if blockBytesInMemory != 0 || blockBytesOnDisk != 0 {
            w.writeVarint(blockBytesInMemory)
            w.writeVarint(blockBytesOnDisk)
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
        // Both or neither (absent: both 0, as from servers that predate them).
        if r.remaining > 0 {
            blockBytesInMemory = try r.readVarint()
            blockBytesOnDisk = try r.readVarint()
        } else {
            (blockBytesInMemory, blockBytesOnDisk) = (0, 0)
        }
    }
}
