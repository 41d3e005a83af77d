import HealthCodec
import HealthModel

/// Asks a node for ``ClusterStatus``. Empty payload.
public struct ClusterStatusQuery: WireMessage {
    public static let kind = MessageKind.clusterStatusQuery
    public init() {}
    public func encode(into w: inout ByteWriter) {}
    public init(from r: inout ByteReader, limits: MessageLimits) throws {}
}

/// The cluster as one node sees it: every partition, who holds its lease, how far its stream goes and how far
/// this node applied it. A single-node server answers with an empty ``node`` and no partitions.
public struct ClusterStatus: WireMessage {
    public static let kind = MessageKind.clusterStatus
    /// The answering node's id ("" in single-node mode).
    public var node: String
    /// Every partition, by index.
    public var partitions: [Partition]

    /// One partition.
    public struct Partition: Hashable, Sendable {
        public var index: UInt64
        /// The lease holder's node id and address as the answering node last saw them ("" when nobody holds it).
        public var owner: String
        public var ownerAddress: String
        /// The sequence of the last message of its stream.
        public var lastSequence: UInt64
        /// The last stream sequence the answering node applied (0 unless it holds the partition).
        public var appliedSequence: UInt64
        /// Messages and bytes the stream holds, and its replicas.
        public var messages: UInt64
        public var bytes: UInt64
        public var replicas: UInt64

        public init(
            index: UInt64, owner: String, ownerAddress: String, lastSequence: UInt64, appliedSequence: UInt64,
            messages: UInt64, bytes: UInt64, replicas: UInt64
        ) {
            self.index = index
            self.owner = owner
            self.ownerAddress = ownerAddress
            self.lastSequence = lastSequence
            self.appliedSequence = appliedSequence
            self.messages = messages
            self.bytes = bytes
            self.replicas = replicas
        }
    }

    public init(node: String, partitions: [Partition]) {
        self.node = node
        self.partitions = partitions
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(node)
        w.writeVarint(UInt64(partitions.count))
        for p in partitions {
            w.writeVarint(p.index)
            w.writeString(p.owner)
            w.writeString(p.ownerAddress)
            for value in [p.lastSequence, p.appliedSequence, p.messages, p.bytes, p.replicas] { w.writeVarint(value) }
        }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        node = try r.readString(limits)
        // A partition takes at least 8 bytes: five varints, two empty strings and its index.
        let count = try r.readListCount("partition count", limits: limits, minBytes: 8)
        var partitions: [Partition] = []
        partitions.reserveCapacity(count)
        for _ in 0..<count {
            let index = try r.readVarint()
            let owner = try r.readString(limits)
            let address = try r.readString(limits)
            partitions.append(
                Partition(
                    index: index, owner: owner, ownerAddress: address, lastSequence: try r.readVarint(),
                    appliedSequence: try r.readVarint(), messages: try r.readVarint(), bytes: try r.readVarint(),
                    replicas: try r.readVarint()))
        }
        self.partitions = partitions
    }
}
