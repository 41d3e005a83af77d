import HealthClient
import HealthWire

/// `hkq cluster`: the cluster hkd runs in (`hkd --cluster`).
public enum ClusterCommand {
    /// `cluster status`.
    public static let group = CommandGroup(
        name: "cluster", abstract: "Show the cluster the server runs in (hkd --cluster).",
        subcommands: [ClusterStatusCommand()])
}

/// `hkq cluster status`: every partition, the node holding it, its stream and how far the node asked applied it.
public struct ClusterStatusCommand: Command {
    /// A cluster status command.
    public init() {}

    /// `status`, no arguments.
    public var spec: CommandSpec {
        CommandSpec(
            name: "status", abstract: "Show the nodes, partitions, owners and stream lag (admin tokens only).",
            discussion: """
                Asks the node --server names. LAST is the partition stream's last sequence, APPLIED how far the \
                node asked applied it and LAG the difference, for the partitions it holds (0 when caught up); \
                OWNER and ADDRESS are the lease holder as that node last saw it. LEASE is current (the node asked \
                holds it and renewed it in time), stale (it holds it but could not renew it in time: it may have \
                expired, so no owner is named), seen (another node's, as last read) or free. JETSTREAM SERVERS is the \
                JetStream cluster's size the node counted at start; a WARNING names streams with fewer replicas \
                than it allows (min(3, servers)). A single-node server has no partitions.
                """)
    }

    /// Asks the server and prints its answer.
    public func run(_ context: CommandContext) async throws {
        let status = try await ServerSession.run(context) { client in try await client.clusterStatus() }
        context.console.printBlock(Self.rendered(status, format: context.globals.format))
    }

    /// The word for `lease`; null from a server that does not say.
    static func lease(_ lease: ClusterStatus.Lease) -> JSONValue {
        switch lease {
        case .unsaid: .null
        case .current: .string("current")
        case .stale: .string("stale")
        case .seen: .string("seen")
        case .free: .string("free")
        }
    }

    /// The answer in `format`: a summary (node, partitions, nodes with how many each holds) and a row per
    /// partition in a table; the partitions alone in CSV; both in JSON.
    public static func rendered(_ status: ClusterStatus, format: OutputFormat) -> String {
        var partitions = RecordSet(columns: [
            .init("partition", title: "PARTITION"), .init("owner", title: "OWNER"),
            .init("address", title: "ADDRESS"), .init("lease", title: "LEASE"), .init("lastSequence", title: "LAST"),
            .init("appliedSequence", title: "APPLIED"), .init("lag", title: "LAG"),
            .init("messages", title: "MESSAGES"), .init("bytes", title: "BYTES"), .init("replicas", title: "REPLICAS"),
        ])
        var held: [String: Int] = [:]
        for p in status.partitions {
            let mine = !status.node.isEmpty && p.owner == status.node
            if !p.owner.isEmpty { held[p.owner, default: 0] += 1 }
            let owner: JSONValue = p.owner.isEmpty ? .null : .string(p.owner)
            let address: JSONValue = p.ownerAddress.isEmpty ? .null : .string(p.ownerAddress)
            partitions.append([
                .integer(Int64(clamping: p.index)), owner, address, Self.lease(p.lease),
                .integer(Int64(clamping: p.lastSequence)),
                mine ? .integer(Int64(clamping: p.appliedSequence)) : .null,
                mine ? .integer(Int64(clamping: p.lastSequence) - Int64(clamping: p.appliedSequence)) : .null,
                .integer(Int64(clamping: p.messages)), .integer(Int64(clamping: p.bytes)),
                .integer(Int64(clamping: p.replicas)),
            ])
        }
        let nodes = held.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        let servers: JSONValue =
            status.jetStreamServers == 0 ? .null : .integer(Int64(clamping: status.jetStreamServers))
        let summary = RecordSet(
            columns: [
                .init("node", title: "NODE"), .init("partitions", title: "PARTITIONS"), .init("nodes", title: "NODES"),
                .init("jetStreamServers", title: "JETSTREAM SERVERS"),
            ],
            rows: [
                [
                    status.node.isEmpty ? .string("single-node") : .string(status.node),
                    .integer(Int64(status.partitions.count)), .string(nodes), servers,
                ]
            ])
        switch format {
        case .table, .chart:
            let warnings = status.warnings.map { "WARNING: \($0)\n" }.joined()
            return summary.renderedFields() + (warnings.isEmpty ? "" : "\n" + warnings)
                + (status.partitions.isEmpty ? "" : "\n" + partitions.renderedTable())
        case .json:
            let rows = (0..<partitions.rows.count).map { partitions.jsonObject(row: $0) }
            let owners = held.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.integer(Int64($0.value))) }
            return JSONValue.object([
                ("node", status.node.isEmpty ? .null : .string(status.node)), ("nodes", .object(owners)),
                ("jetStreamServers", servers), ("warnings", .array(status.warnings.map(JSONValue.string))),
                ("partitions", .array(rows)),
            ]).rendered + "\n"
        case .csv:
            return partitions.renderedCSV()
        }
    }
}
