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
    /// The answering process's store memory by structure (``MemoryPart``), in the server's order; empty from a
    /// server that predates it.
    public var memoryParts: [MemoryPart]

    /// Heap bytes of one of the store's structures (names as in docs/OUTPUT.md, *server-info*).
    public struct MemoryPart: Hashable, Sendable {
        public var name: String
        public var bytes: UInt64
        public init(name: String, bytes: UInt64) {
            self.name = name
            self.bytes = bytes
        }
    }

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
        samplesPerType: [TypeCount], blockBytesInMemory: UInt64 = 0, blockBytesOnDisk: UInt64 = 0,
        memoryParts: [MemoryPart] = []
    ) {
        self.serverVersion = serverVersion
        self.uptimeMicros = uptimeMicros
        self.connections = connections
        self.residentBytes = residentBytes
        self.subjects = subjects
        self.samplesPerType = samplesPerType
        self.blockBytesInMemory = blockBytesInMemory
        self.blockBytesOnDisk = blockBytesOnDisk
        self.memoryParts = memoryParts
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
        // An optional pair, written unless both are 0 and no memory part follows (the payload of a server that
        // predates them); then the optional list of memory parts, written unless empty.
        if blockBytesInMemory != 0 || blockBytesOnDisk != 0 || !memoryParts.isEmpty {
            w.writeVarint(blockBytesInMemory)
            w.writeVarint(blockBytesOnDisk)
        }
        if !memoryParts.isEmpty {
            w.writeVarint(UInt64(memoryParts.count))
            for part in memoryParts {
                w.writeString(part.name)
                w.writeVarint(part.bytes)
            }
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
            if blockBytesInMemory == 0, blockBytesOnDisk == 0, r.remaining == 0 {
                throw CodecError(
                    .malformedPayload, "block bytes 0 and 0 are written only before the store memory, which is missing")
            }
        } else {
            (blockBytesInMemory, blockBytesOnDisk) = (0, 0)
        }
        var parts: [MemoryPart] = []
        if r.remaining > 0 {
            let count = try r.readListCount("memory part count", limits: limits, minBytes: 2)
            parts.reserveCapacity(count)
            for _ in 0..<count { parts.append(MemoryPart(name: try r.readString(limits), bytes: try r.readVarint())) }
        }
        memoryParts = parts
    }
}
