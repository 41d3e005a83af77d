/// How many copies the cluster's streams and buckets get: `--replicas` when given, otherwise min(3, the JetStream
/// cluster's size), so that on three or more servers one server's failure (or its disk's loss) keeps every
/// partition writable and every acknowledged change.
///
/// Without `--replicas` a node also raises existing streams and buckets that have fewer copies (created by an
/// explicit smaller count, or on a smaller cluster); with it, it keeps them as they are and the shortfall is
/// warned about in the log and in `hkq cluster status`.
public struct ClusterReplicas: Sendable, Equatable {
    /// The JetStream cluster's size as counted at start (``JetStream/Servers/count``).
    public var servers: Int
    /// `--replicas`, when given.
    public var requested: Int?

    public init(servers: Int, requested: Int?) {
        self.servers = servers
        self.requested = requested
    }

    /// The most JetStream keeps of a stream.
    public static let maximum = 5

    /// min(3, servers): the count that survives one server's loss wherever there are three.
    public var recommended: Int { min(3, max(1, servers)) }

    /// The copies of the streams and buckets this node creates.
    public var count: Int { requested ?? recommended }

    /// Whether this node raises existing streams with fewer than ``count`` copies (only by default: an explicit
    /// `--replicas` is the operator's choice).
    public var raisesExisting: Bool { requested == nil }

    /// Counts the JetStream servers on `jetStream` (``JetStream/servers(quiet:wait:)``).
    public static func measure(_ jetStream: JetStream, requested: Int?) throws(NATSFailure) -> ClusterReplicas {
        ClusterReplicas(servers: try jetStream.servers().count, requested: requested)
    }

    /// The warning for an explicit `--replicas` below ``recommended``; `nil` otherwise.
    public var warning: String? {
        guard let requested, requested < recommended else { return nil }
        return "--replicas \(requested) on a JetStream cluster of \(servers) servers: what this node creates has "
            + Self.consequence(requested, recommended: recommended)
    }

    /// The warning for streams found with fewer than ``recommended`` copies: the partition streams' replicas and
    /// the other streams' (name and replicas each); `nil` when there is none.
    public func shortfall(partitionStreams: [Int], others: [(name: String, replicas: Int)]) -> String? {
        let partitions = partitionStreams.filter { $0 < recommended }
        let short = others.filter { $0.replicas < recommended }
        guard let fewest = (partitions + short.map(\.replicas)).min() else { return nil }
        let names = (partitions.isEmpty ? [] : ["\(partitions.count) partition streams"]) + short.map(\.name)
        return "\(names.joined(separator: ", ")) on a JetStream cluster of \(servers) servers have "
            + Self.consequence(fewest, recommended: recommended)
    }

    /// What `count` copies mean where `recommended` are due.
    private static func consequence(_ count: Int, recommended: Int) -> String {
        "\(count) \(count == 1 ? "replica" : "replicas"), fewer than \(recommended): "
            + "when \(count == 1 ? "the server holding one is" : "a majority of its servers are") down its "
            + "partitions refuse writes, and losing \(count == 1 ? "its disk" : "their disks") loses acknowledged "
            + "data (start a node without --replicas to raise them to \(recommended))"
    }
}
