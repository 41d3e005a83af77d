import HealthCluster
import HealthWire

extension ClusterStatus {
    /// What `node` reports about its cluster, as the protocol carries it: its partitions (a lease it holds but
    /// could not renew in time as ``ClusterStatus/Lease/stale``, with no owner), the JetStream cluster's
    /// size it counted at start, and a warning when streams have fewer replicas than that size allows.
    init(_ node: ClusterNode) throws {
        let partitions = try node.status()
        self.init(
            node: node.options.nodeID,
            partitions: partitions.map { p in
                // A lease this node cannot confirm names no owner: it may be another node's by now.
                let lease: ClusterStatus.Lease =
                    p.held ? (p.current ? .current : .stale) : (p.holder == nil ? .free : .seen)
                let holder = lease == .stale ? nil : p.holder
                return ClusterStatus.Partition(
                    index: UInt64(p.index), owner: holder?.node ?? "", ownerAddress: holder?.address ?? "",
                    lastSequence: p.stream.lastSequence, appliedSequence: p.applied, messages: p.stream.messages,
                    bytes: p.stream.bytes, replicas: UInt64(max(0, p.stream.replicas)), lease: lease)
            },
            jetStreamServers: UInt64(node.replicas.servers),
            warnings: try node.replicaShortfall(partitions).map { [$0] } ?? [])
    }
}
