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
/// this node applied it, and warnings about the cluster's safety. A single-node server answers with an empty
/// ``node`` and no partitions.
public struct ClusterStatus: WireMessage {
    public static let kind = MessageKind.clusterStatus
    /// The answering node's id ("" in single-node mode).
    public var node: String
    /// Every partition, by index.
    public var partitions: [Partition]
    /// The JetStream cluster's size as the node counted it at start (0: not said).
    public var jetStreamServers: UInt64
    /// What puts the cluster's availability or data at risk, one sentence each (streams with fewer replicas
    /// than the JetStream cluster allows).
    public var warnings: [String]

    /// A partition's lease as the answering node knows it.
    public enum Lease: UInt8, Hashable, Sendable {
        /// Not said (a server that predates the field).
        case unsaid = 0
        /// The answering node holds it and renewed it in time: it serves the partition.
        case current = 1
        /// The answering node holds it but could not renew it in time (cut off from NATS, say): it may have
        /// expired and another node may hold it; the answering node does not serve the partition, and names no
        /// owner.
        case stale = 2
        /// Another node held it when the answering node last read it (``Partition/owner`` names it).
        case seen = 3
        /// Nobody held it when the answering node last read it.
        case free = 4
    }

    /// One partition.
    public struct Partition: Hashable, Sendable {
        public var index: UInt64
        /// The lease holder's node id and address as the answering node last saw them ("" when nobody holds it,
        /// and when the answering node cannot confirm its own lease: ``lease`` is ``Lease/stale``).
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
        /// What the answering node knows of the lease.
        public var lease: Lease

        public init(
            index: UInt64, owner: String, ownerAddress: String, lastSequence: UInt64, appliedSequence: UInt64,
            messages: UInt64, bytes: UInt64, replicas: UInt64, lease: Lease = .unsaid
        ) {
            self.index = index
            self.owner = owner
            self.ownerAddress = ownerAddress
            self.lastSequence = lastSequence
            self.appliedSequence = appliedSequence
            self.messages = messages
            self.bytes = bytes
            self.replicas = replicas
            self.lease = lease
        }
    }

    public init(node: String, partitions: [Partition], jetStreamServers: UInt64 = 0, warnings: [String] = []) {
        self.node = node
        self.partitions = partitions
        self.jetStreamServers = jetStreamServers
        self.warnings = warnings
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
        // Written together, and only when one is set: a payload that ends after the partitions means 0 and none,
        // one that ends after the warnings leases not said.
        let leasesSaid = partitions.contains { $0.lease != .unsaid }
        if jetStreamServers != 0 || !warnings.isEmpty || leasesSaid {
            w.writeVarint(jetStreamServers)
            w.writeVarint(UInt64(warnings.count))
            for warning in warnings { w.writeString(warning) }
        }
        if leasesSaid {
            w.writeVarint(UInt64(partitions.count))
            for p in partitions { w.write(p.lease.rawValue) }
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
        if r.remaining > 0 {
            jetStreamServers = try r.readVarint()
            let count = try r.readListCount("warning", limits: limits, minBytes: 1)
            warnings = try (0..<count).map { _ in try r.readString(limits) }
        } else {
            (jetStreamServers, warnings) = (0, [])
        }
        if r.remaining > 0 {
            let count = try r.readListCount("lease", limits: limits, minBytes: 1)
            guard count == partitions.count else {
                throw CodecError(
                    .malformedPayload,
                    "\(count) partition leases for \(partitions.count) partitions before byte \(r.offset)")
            }
            for index in 0..<count {
                let raw = try r.readByte()
                guard let lease = Lease(rawValue: raw) else {
                    throw CodecError(.malformedPayload, "unknown lease state \(raw) before byte \(r.offset)")
                }
                self.partitions[index].lease = lease
            }
        }
    }
}
