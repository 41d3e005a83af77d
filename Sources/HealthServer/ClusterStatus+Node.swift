import HealthCluster
import HealthWire

extension ClusterStatus {
    /// What `node` reports about its cluster, as the protocol carries it: its partitions, the JetStream cluster's
    /// size it counted at start, and a warning when streams have fewer replicas than that size allows.
    init(_ node: ClusterNode) throws {
        let partitions = try node.status()
        self.init(
            node: node.options.nodeID,
            partitions: partitions.map { p in
                ClusterStatus.Partition(
                    index: UInt64(p.index), owner: p.holder?.node ?? "", ownerAddress: p.holder?.address ?? "",
                    lastSequence: p.stream.lastSequence, appliedSequence: p.applied, messages: p.stream.messages,
                    bytes: p.stream.bytes, replicas: UInt64(max(0, p.stream.replicas)))
            },
            jetStreamServers: UInt64(node.replicas.servers),
            warnings: try node.replicaShortfall(partitions).map { [$0] } ?? [])
    }
}
