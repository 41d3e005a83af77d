import HealthCluster
import HealthWire

extension ClusterStatus {
    /// What `node` reports about its cluster, as the protocol carries it.
    init(_ node: ClusterNode) throws {
        self.init(
            node: node.options.nodeID,
            partitions: try node.status().map { p in
                ClusterStatus.Partition(
                    index: UInt64(p.index), owner: p.holder?.node ?? "", ownerAddress: p.holder?.address ?? "",
                    lastSequence: p.stream.lastSequence, appliedSequence: p.applied, messages: p.stream.messages,
                    bytes: p.stream.bytes, replicas: UInt64(max(0, p.stream.replicas)))
            })
    }
}
