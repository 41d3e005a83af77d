/// How a cluster's subjects map to partitions, and each partition's JetStream names (Protocol/STORAGE.md,
/// "Cluster mode"): P partitions, fixed when the cluster is created; subject `s` belongs to partition
/// `FNV-1a-64(UTF-8 of s) mod P`, a hash that never changes between versions or machines.
public struct PartitionLayout: Sendable, Equatable {
    /// The largest partition count a cluster may have.
    public static let maxPartitions = 4096
    /// P.
    public let count: Int

    /// A layout of `count` partitions (1 through ``maxPartitions``).
    public init(count: Int) {
        precondition((1...Self.maxPartitions).contains(count), "a cluster has 1 to \(Self.maxPartitions) partitions")
        self.count = count
    }

    /// The partition of `subject`.
    public func partition(of subject: String) -> Int {
        Int(Self.fnv1a64(subject.utf8) % UInt64(count))
    }

    /// The stream holding partition `index`'s log: `HK_P<index>` (decimal).
    public func streamName(_ index: Int) -> String { "HK_P\(index)" }

    /// The one subject of that stream: `hk.p.<index>`.
    public func streamSubject(_ index: Int) -> String { "hk.p.\(index)" }

    /// The lease key of partition `index` in the leases bucket: `p.<index>`.
    public func leaseKey(_ index: Int) -> String { "p.\(index)" }

    /// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
    static func fnv1a64<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
