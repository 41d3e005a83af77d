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
    /// `partitions`: P never changes). Every partition stream and the snapshot stream exist afterwards, raised
    /// to `replicas` copies unless they were given explicitly (``ClusterReplicas/raisesExisting``; each raise
    /// logged). Throws ``NATSFailure`` when JetStream does not answer (retrying helps), ``ErrorCode/storageUnavailable``
    /// when the recorded count is damaged.
    public static func open(
        _ jetStream: JetStream, partitions: Int, replicas: ClusterReplicas, log: (String) -> Void = { _ in }
    ) throws -> PartitionLayout {
        let settings = try bucket(jetStream, settingsBucket, replicas: replicas, log: log)
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
            try stream(
                jetStream, layout.streamName(index), subject: layout.streamSubject(index), replicas: replicas, log: log)
        }
        try stream(
            jetStream, PartitionSnapshots.streamName, subject: PartitionSnapshots.streamSubjects, replicas: replicas,
            log: log)
        return layout
    }

    /// Creates stream `name` holding `subject` with ``ClusterReplicas/count`` copies, or raises an existing one
    /// with fewer when ``ClusterReplicas/raisesExisting``.
    static func stream(
        _ jetStream: JetStream, _ name: String, subject: String, replicas: ClusterReplicas, log: (String) -> Void
    ) throws(NATSFailure) {
        try jetStream.addStream(name, subject: subject, replicas: replicas.count)
        try raise(jetStream, name, replicas: replicas, log: log)
    }

    /// Opens the key-value bucket `name` like ``JetStream/keyValue(_:ttl:replicas:history:)`` with
    /// ``ClusterReplicas/count`` copies, and raises an existing one with fewer when
    /// ``ClusterReplicas/raisesExisting``.
    public static func bucket(
        _ jetStream: JetStream, _ name: String, ttl: Duration? = nil, replicas: ClusterReplicas,
        log: (String) -> Void = { _ in }
    ) throws(NATSFailure) -> KeyValueBucket {
        let bucket = try jetStream.keyValue(name, ttl: ttl, replicas: replicas.count)
        try raise(jetStream, bucketStream(name), replicas: replicas, log: log)
        return bucket
    }

    /// The stream holding key-value bucket `bucket`: `KV_<bucket>`.
    public static func bucketStream(_ bucket: String) -> String { "KV_" + bucket }

    private static func raise(
        _ jetStream: JetStream, _ stream: String, replicas: ClusterReplicas, log: (String) -> Void
    ) throws(NATSFailure) {
        guard replicas.raisesExisting else { return }
        let previous = try jetStream.raiseReplicas(stream, to: replicas.count)
        if previous < replicas.count {
            log("raised the replicas of stream \(stream) from \(previous) to \(replicas.count)")
        }
    }
}

extension ClusterSetup {
    /// The key holding the certificate every node serves with `--tls auto` (its PEM, then its key's).
    public static let certificateKey = "tls-certificate"

    /// The value of `key` in the settings bucket of the cluster `startup` reaches: the one recorded, or `make()`'s,
    /// recorded now when the key has none (when nodes start together, the first to record wins and every node
    /// gets that value). Opens a connection of its own, released on return, waiting for JetStream like a node
    /// (``JetStreamStartup``) and creating the bucket with `requested` replicas (`nil`: ``ClusterReplicas``'s
    /// default).
    public static func sharedSetting(
        _ key: String, startup: JetStreamStartup, requested: Int?, make: () throws -> [UInt8]
    ) throws -> (value: [UInt8], created: Bool) {
        let jetStream = try startup.connect()
        let settings = try startup.retrying {
            let replicas = try ClusterReplicas.measure(jetStream, requested: requested)
            return try bucket(jetStream, settingsBucket, replicas: replicas, log: startup.logLine)
        }
        if let entry = try startup.retrying({ try settings.get(key) }) { return (entry.value, false) }
        let made = try make()
        if try startup.retrying({ try settings.create(key, made) }) != nil { return (made, true) }
        guard let entry = try startup.retrying({ try settings.get(key) }) else {
            throw HealthError(.storageUnavailable, "\(settingsBucket)/\(key) was recorded and then removed; retry")
        }
        return (entry.value, false)
    }
}

extension ClusterSetup {
    /// The key holding the identities every node shares (the JSON of `identities.json`, Protocol/STORAGE.md).
    public static let identitiesKey = "identities"
}
