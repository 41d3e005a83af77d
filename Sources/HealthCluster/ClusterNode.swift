import HealthEngine
import HealthModel
import HealthPosix
import HealthStorage
import Synchronization

/// What `hkd --cluster` needs to run as one node of a cluster (ARCHITECTURE.md, *Cluster mode*).
public struct ClusterOptions: Hashable, Sendable {
    /// The NATS servers, comma-separated `nats://host:port`.
    public var urls: String
    /// This node's id: 1 to 64 of `A-Z a-z 0-9 . _ -`.
    public var nodeID: String
    /// P when this node creates the cluster (ignored otherwise: P is the recorded one).
    public var partitions: Int
    /// Copies of every stream and bucket this node creates (`--replicas`); `nil`: min(3, the JetStream
    /// cluster's size), raising existing ones with fewer (``ClusterReplicas``).
    public var replicas: Int?
    /// How long a lease outlives its last renewal.
    public var leaseTTL: Duration
    /// A standby node takes no share of the partitions while an active node lives: only partitions nobody
    /// took (`--standby`).
    public var standby: Bool
    /// Time between snapshots of a partition that changes (`--snapshot-interval`); `nil`: only by size and when
    /// draining.
    public var snapshotInterval: Duration?
    /// Bytes of a partition's stream after its snapshot that make the next one due.
    public var snapshotStreamBytes: UInt64

    public init(
        urls: String, nodeID: String, partitions: Int = 64, replicas: Int? = nil, leaseTTL: Duration = .seconds(10),
        standby: Bool = false, snapshotInterval: Duration? = .seconds(600), snapshotStreamBytes: UInt64 = 64 << 20
    ) {
        self.urls = urls
        self.nodeID = nodeID
        self.partitions = partitions
        self.replicas = replicas
        self.leaseTTL = leaseTTL
        self.standby = standby
        self.snapshotInterval = snapshotInterval
        self.snapshotStreamBytes = snapshotStreamBytes
    }

    /// Throws ``ErrorCode/invalidArgument`` for a node id that is not 1 to 64 of `A-Z a-z 0-9 . _ -`.
    public static func checkNodeID(_ id: String) throws {
        let allowed = id.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard (1...64).contains(id.utf8.count), allowed else {
            throw HealthError(.invalidArgument, "--node-id takes 1 to 64 of A-Z a-z 0-9 . _ -, not \"\(id)\"")
        }
    }
}

/// One hkd node of a cluster: its connection to JetStream, the partition streams as its change log, its leases,
/// and the store holding the partitions it took (rebuilt from their streams).
public final class ClusterNode: Sendable {
    public let options: ClusterOptions
    /// The store, whose changes go to the partition streams.
    public let durable: DurableStore
    public let log: JetStreamChangeLog
    public let leases: PartitionLeases
    /// The cluster's settings bucket (``ClusterSetup/settingsBucket``) on this node's connection: shared
    /// settings, identities and what each node's partitions hold.
    public let settings: KeyValueBucket
    /// What this node's partitions hold, published for server info across the cluster.
    let contents: ClusterContents
    /// Publishes ``contents`` every ``contentsInterval``.
    private let contentsPublisher: PeriodicThread
    /// Writes the snapshots of the partitions this node serves.
    let snapshotter: PartitionSnapshotter
    /// How often this node publishes what its partitions hold.
    static let contentsInterval: Duration = .seconds(2)

    /// The copies of the cluster's streams and buckets, as decided at start.
    public let replicas: ClusterReplicas

    /// Connects, opens (or creates) the cluster, announces itself, takes free partitions up to its fair share
    /// (``PartitionLeases``), rebuilding each from its stream, and starts renewing and rebalancing, and
    /// publishing what its partitions hold. `address` is where clients reach this node (`host:port`), which
    /// other nodes send them to; `httpAddress` where HTTP clients do, when it serves the HTTP API. Waits for JetStream as `startup` says (``JetStreamStartup``: NATS servers not
    /// up yet, a NATS cluster without a metadata leader yet), logging to its `logLine`; throws
    /// ``ErrorCode/shuttingDown`` when told to stop while waiting.
    public init(
        _ options: ClusterOptions, address: String, httpAddress: String? = nil, startup: JetStreamStartup
    ) throws {
        try ClusterOptions.checkNodeID(options.nodeID)
        let logLine = startup.logLine
        let jetStream = try startup.connect()
        let (replicas, layout, settings) = try startup.retrying {
            let replicas = try ClusterReplicas.measure(jetStream, requested: options.replicas)
            let layout = try ClusterSetup.open(
                jetStream, partitions: options.partitions, replicas: replicas, log: logLine)
            let settings = try ClusterSetup.bucket(
                jetStream, ClusterSetup.settingsBucket, replicas: replicas, log: logLine)
            return (replicas, layout, settings)
        }
        self.replicas = replicas
        self.settings = settings
        let holders = HolderBox()
        let log = JetStreamChangeLog(
            jetStream: jetStream, layout: layout, leaseDeadline: { holders.leases?.currentUntil($0) }
        ) { partition, subject in
            Self.refusal(
                partition: partition, subject: subject, holder: holders.leases?.holder(of: partition),
                others: holders.leases?.otherHolders ?? [])
        }
        let store = HealthStore(anchorsFromSequences: true)
        let leases = try startup.retrying {
            try PartitionLeases(
                log: log, store: store, node: options.nodeID, address: address, httpAddress: httpAddress,
                ttl: options.leaseTTL,
                replicas: replicas, standby: options.standby, logLine: logLine)
        }
        holders.set(leases)
        try startup.retrying { try leases.checkNodeIDUnused() }
        let taken = leases.pass()
        logLine(
            "cluster node \(options.nodeID)\(options.standby ? " (standby)" : "") at \(address): \(layout.count) "
                + "partitions on \(options.urls) (JetStream servers \(replicas.servers), replicas \(replicas.count)), "
                + "holds \(taken.count)")
        try leases.start()
        snapshotter = PartitionSnapshotter(
            log: log, store: store, leases: leases, interval: options.snapshotInterval,
            streamBytes: options.snapshotStreamBytes, logLine: logLine)
        try snapshotter.start()
        self.options = options
        self.log = log
        self.leases = leases
        durable = DurableStore(store: store, changeLog: log, log: logLine)
        let contents = ClusterContents(bucket: settings, node: options.nodeID)
        self.contents = contents
        contentsPublisher = try PeriodicThread(name: "hkd-contents", every: Self.contentsInterval) {
            do {
                try contents.publish(Self.servedContents(store, log))
            } catch {
                logLine("cannot publish what this node's partitions hold: \(error)")
            }
        }
    }

    /// What the partitions `log` serves hold in `store` now, per partition.
    static func servedContents(_ store: HealthStore, _ log: JetStreamChangeLog) -> [Int: StoreContents] {
        let layout = log.layout
        return store.contents { layout.partition(of: $0) }.filter { log.serves($0.key) }
    }

    /// The cluster's contents as this node sees them: its own partitions' now, the others' as their holders last
    /// published them (every ``contentsInterval``). Throws ``ErrorCode/storageUnavailable``.
    public func clusterContents() throws -> StoreContents {
        try contents.merged(partitions: log.layout.count, own: Self.servedContents(durable.store, log)) {
            leases.holder(of: $0)?.node
        }
    }

    /// Throws unless this node serves `subject` now: ``ErrorCode/notOwner`` naming the owner when another node
    /// holds its partition; the retryable ``ErrorCode/storageUnavailable`` when nobody does yet, when this node's
    /// lease was not renewed recently enough to be sure it is still this node's (``PartitionLeases/isCurrent(_:)``;
    /// the message names the other nodes holding partitions, where a client may go meanwhile), or when this node
    /// is still rebuilding it.
    public func checkServes(_ subject: String) throws {
        let partition = log.layout.partition(of: subject)
        guard log.owns(partition) else {
            throw Self.refusal(
                partition: partition, subject: subject, holder: leases.holder(of: partition),
                others: leases.otherHolders)
        }
        guard leases.isCurrent(partition) else {
            throw HealthError(
                .storageUnavailable,
                "the lease of partition \(partition) (subject \(subject)) was not renewed in time (this node may be "
                    + "cut off from the cluster's NATS servers); retry" + Self.elsewhere(leases.otherHolders))
        }
        if log.serves(partition) { return }
        throw HealthError(
            .storageUnavailable, "partition \(partition) (subject \(subject)) is being rebuilt from its stream; retry")
    }

    /// The HTTP API address of the node holding `subject`'s partition, when another node holds it and announced
    /// one (``PartitionLeases/httpAddress(of:)``: one request to JetStream); `nil` when this node holds it, nobody
    /// does, or the holder serves no HTTP API.
    public func httpAddress(ofOwnerOf subject: String) -> String? {
        let partition = log.layout.partition(of: subject)
        guard !log.owns(partition), let holder = leases.holder(of: partition), holder.node != options.nodeID else {
            return nil
        }
        return leases.httpAddress(of: holder.node)
    }

    /// The error for a change or query of `subject`, whose partition this node does not hold: names its holder,
    /// or, when none is known, the `others` holding partitions.
    static func refusal(
        partition: Int, subject: String, holder: PartitionLeases.Holder?, others: [PartitionLeases.Holder]
    ) -> HealthError {
        guard let holder else {
            return HealthError(
                .storageUnavailable,
                "no node holds partition \(partition) (subject \(subject)) yet; retry" + elsewhere(others))
        }
        return HealthError(.notOwner, "\(holder.address) owns partition \(partition) (subject \(subject))")
    }

    /// `, or ask another node: <id> at <address>, …` naming `others`; empty when there is none.
    static func elsewhere(_ others: [PartitionLeases.Holder]) -> String {
        others.isEmpty
            ? "" : ", or ask another node: " + others.map { "\($0.node) at \($0.address)" }.joined(separator: ", ")
    }

    /// One partition as this node sees it: for ``status()``.
    public struct PartitionStatus: Sendable {
        public var index: Int
        /// The lease holder as last seen (this node when it holds it); `nil` when nobody holds it.
        public var holder: PartitionLeases.Holder?
        /// Whether this node holds the lease, and whether it renewed it in time (``PartitionLeases/isCurrent(_:)``):
        /// a lease held but not current may have expired, and another node may hold it.
        public var held: Bool
        public var current: Bool
        /// Its stream now.
        public var stream: JetStream.StreamState
        /// The last stream sequence this node applied (0 unless it holds the partition).
        public var applied: UInt64
    }

    /// Every partition: holder, stream state and what this node applied. One JetStream request per partition;
    /// throws ``ErrorCode/storageUnavailable`` when NATS does not answer.
    public func status() throws -> [PartitionStatus] {
        try (0..<log.layout.count).map { index in
            let stream: JetStream.StreamState
            do {
                stream = try log.jetStream.streamState(log.layout.streamName(index))
            } catch let failure as NATSFailure {
                throw failure.healthError
            }
            return PartitionStatus(
                index: index, holder: leases.holder(of: index), held: leases.currentUntil(index) != nil,
                current: leases.isCurrent(index), stream: stream,
                applied: log.owns(index) ? log.lastApplied(index) : 0)
        }
    }

    /// The warning for the cluster's streams and buckets that have fewer copies than
    /// ``ClusterReplicas/recommended`` (``ClusterReplicas/shortfall(partitionStreams:others:)``), given the
    /// partitions as ``status()`` read them; `nil` when none has. Reads the other streams' states; throws
    /// ``ErrorCode/storageUnavailable`` when NATS does not answer.
    public func replicaShortfall(_ partitions: [PartitionStatus]) throws -> String? {
        let others = [
            PartitionSnapshots.streamName, ClusterSetup.bucketStream(ClusterSetup.settingsBucket),
            ClusterSetup.bucketStream(PartitionLeases.bucketName),
        ]
        do {
            let states = try others.map { name throws(NATSFailure) in
                (name: name, replicas: try log.jetStream.streamState(name).replicas)
            }
            return replicas.shortfall(partitionStreams: partitions.map(\.stream.replicas), others: states)
        } catch {
            throw error.healthError
        }
    }

    /// Writes a snapshot into JetStream of every partition this node serves that changed since its last one, now
    /// (they are also written by size and time, and when the node drains).
    public func snapshotAll() { snapshotter.snapshotAll() }

    /// Drains the node: snapshots the partitions it serves (so that their next owners load them instead of
    /// replaying their streams), leaves the registry and gives the leases up (each partition disowned first,
    /// then its lease deleted), so the other nodes take the partitions on their next pass.
    public func stop() {
        contentsPublisher.stop()
        snapshotter.stop()
        snapshotter.snapshotAll()
        leases.stop()
    }
}

/// The leases, set once they exist, for the change log's refusal made before them.
private final class HolderBox: Sendable {
    private let box = Mutex<PartitionLeases?>(nil)
    var leases: PartitionLeases? { box.withLock { $0 } }
    func set(_ leases: PartitionLeases) { box.withLock { $0 = leases } }
}
