import HealthModel

/// A cluster's JetStream assets (Protocol/STORAGE.md, "Cluster mode"): the settings bucket `HK_CLUSTER`, whose
/// key `partitions` holds P in decimal ASCII, written once by whichever node creates the cluster, and one stream
/// per partition.
public enum ClusterSetup {
    /// The settings bucket.
    public static let settingsBucket = "HK_CLUSTER"
    /// The key holding P.
    public static let partitionsKey = "partitions"

    /// Opens the cluster on `jetStream`, creating it with `partitions` partitions and `replicas` copies of each
    /// stream and bucket when it does not exist yet; returns the layout recorded at creation (which wins over
    /// `partitions`: P never changes). Every partition stream exists afterwards.
    public static func open(_ jetStream: JetStream, partitions: Int, replicas: Int) throws -> PartitionLayout {
        do {
            let settings = try jetStream.keyValue(settingsBucket, replicas: replicas)
            let recorded: [UInt8]
            if let entry = try settings.get(partitionsKey) {
                recorded = entry.value
            } else if try settings.create(partitionsKey, Array(String(partitions).utf8)) != nil {
                recorded = Array(String(partitions).utf8)
            } else {
                // Another node created the cluster meanwhile.
                recorded = try settings.get(partitionsKey)?.value ?? []
            }
            guard let count = Int(String(decoding: recorded, as: UTF8.self)),
                (1...PartitionLayout.maxPartitions).contains(count)
            else {
                throw HealthError(
                    .storageUnavailable,
                    "\(settingsBucket)/\(partitionsKey) holds \"\(String(decoding: recorded, as: UTF8.self))\", "
                        + "not a partition count of 1 to \(PartitionLayout.maxPartitions)")
            }
            let layout = PartitionLayout(count: count)
            for index in 0..<count {
                try jetStream.addStream(
                    layout.streamName(index), subject: layout.streamSubject(index), replicas: replicas)
            }
            return layout
        } catch let failure as NATSFailure {
            throw failure.healthError
        }
    }
}
