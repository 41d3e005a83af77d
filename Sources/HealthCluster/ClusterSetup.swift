import HealthModel

/// A cluster's JetStream assets (Protocol/STORAGE.md, "Cluster mode"): the settings bucket `HK_CLUSTER`, whose
/// key `partitions` holds P in decimal ASCII, written once by whichever node creates the cluster, one stream
/// per partition, and the stream of partition snapshots.
public enum ClusterSetup {
    /// The settings bucket.
    public static let settingsBucket = "HK_CLUSTER"
    /// The key holding P.
    public static let partitionsKey = "partitions"

    /// Opens the cluster on `jetStream`, creating it with `partitions` partitions and `replicas` copies of each
    /// stream and bucket when it does not exist yet; returns the layout recorded at creation (which wins over
    /// `partitions`: P never changes). Every partition stream and the snapshot stream exist afterwards.
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
            try jetStream.addStream(
                PartitionSnapshots.streamName, subject: PartitionSnapshots.streamSubjects, replicas: replicas)
            return layout
        } catch let failure as NATSFailure {
            throw failure.healthError
        }
    }
}

extension ClusterSetup {
    /// The key holding the certificate every node serves with `--tls auto` (its PEM, then its key's).
    public static let certificateKey = "tls-certificate"

    /// The value of `key` in the settings bucket of the cluster on `urls`: the one recorded, or `make()`'s,
    /// recorded now when the key has none (when nodes start together, the first to record wins and every node
    /// gets that value). Opens a connection of its own, closed on return; throws
    /// ``ErrorCode/storageUnavailable`` when NATS cannot be reached.
    public static func sharedSetting(
        _ key: String, urls: String, replicas: Int, make: () throws -> [UInt8]
    ) throws -> (value: [UInt8], created: Bool) {
        do {
            let settings = try JetStream(urls: urls).keyValue(settingsBucket, replicas: replicas)
            if let entry = try settings.get(key) { return (entry.value, false) }
            let made = try make()
            if try settings.create(key, made) != nil { return (made, true) }
            guard let entry = try settings.get(key) else {
                throw HealthError(.storageUnavailable, "\(settingsBucket)/\(key) was recorded and then removed; retry")
            }
            return (entry.value, false)
        } catch let failure as NATSFailure {
            throw failure.healthError
        }
    }
}

extension ClusterSetup {
    /// The key holding the identities every node shares (the JSON of `identities.json`, Protocol/STORAGE.md).
    public static let identitiesKey = "identities"
}
