import HealthCluster
import HealthEngine

extension ClusterNode {
    /// What the partitions this node serves hold now, per partition.
    func servedContents() -> [Int: StoreContents] {
        let layout = log.layout
        return durable.store.contents { layout.partition(of: $0) }.filter { log.serves($0.key) }
    }

    /// The cluster's contents as this node sees them: its own partitions' now, the others' as their holders last
    /// published them through `contents`.
    func clusterContents(through contents: ClusterContents) throws -> StoreContents {
        try contents.merged(partitions: log.layout.count, own: servedContents()) { leases.holder(of: $0)?.node }
    }
}
