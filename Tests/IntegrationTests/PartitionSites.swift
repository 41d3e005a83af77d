import Foundation
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Three "sites" on one host for the network-partition tests: three Linux network namespaces on a bridge
/// (``NamespaceNetwork``), a NATS server (routes to the other two, JetStream) and an hkd node in each, every
/// node talking to its own site's server, default replicas (3) and lease TTL (10 s); the test, in this process's
/// namespace, reaches every node. Once the nodes hold 3, 3 and 2 of the 8 partitions, writers (with retries)
/// and probers (``WriteProbes``, without) write through every node. A test then cuts site a off in some way
/// and heals it; ``finish(_:)`` checks what every scenario must keep: nothing acknowledged lost or stored twice,
/// and each node's log of ownership changes agreeing with the leases it reports.
final class PartitionSites {
    static let ids = ["a", "b", "c"]
    /// The NATS servers' route port, on each site's address.
    static let routePort = 6222
    /// Pings every second, a connection (a route too) whose two pings went unanswered is closed, and so is one
    /// whose writes stall for 2 s: a server cut off without a reset is noticed within seconds, not after the
    /// defaults' minutes.
    static let natsConfiguration = "ping_interval: \"1s\"\nping_max: 2\nwrite_deadline: \"2s\"\n"

    let network: NamespaceNetwork
    let servers: [NATSServer]
    let nodes: [TestServer]
    let ledger: ClusterFaultTests.Ledger
    let probes: WriteProbes
    private let writers: [Task<Void, Never>]

    /// The sites, with writers (seeded by `seed`) and probers running and some samples acknowledged.
    init(seed: UInt64) async throws {
        let network = try NamespaceNetwork(count: 3)
        let routes = network.addresses.map { NATSServer.ClusterMember.Route(host: $0, port: Self.routePort) }
        var servers: [NATSServer] = []
        for (index, address) in network.addresses.enumerated() {
            servers.append(
                try await NATSServer(
                    host: address, port: 4222,
                    member: .init(name: "n\(index + 1)", route: routes[index], routes: routes),
                    namespace: network.names[index], configuration: Self.natsConfiguration))
        }
        var nodes: [TestServer] = []
        for (index, address) in network.addresses.enumerated() {
            nodes.append(
                try await TestServer(
                    host: address,
                    arguments: [
                        "--auth", "off", "--tls", "off", "--allow-plaintext", "--cluster", servers[index].url,
                        "--node-id", Self.ids[index], "--partitions", "\(ClusterFaultTests.partitions)",
                        "--snapshot-interval", "0",
                    ], startTimeout: .seconds(90), namespace: network.names[index]))
        }
        try await ClusterFaultTests.waitForHoldings(Self.balanced, seenBy: nodes)
        let ledger = ClusterFaultTests.Ledger()
        self.ledger = ledger
        writers = nodes.indices.map { ClusterFaultTests.writer($0, through: nodes[$0], seed: seed, ledger: ledger) }
        probes = WriteProbes(nodes, subjects: ClusterFaultTests.subjects, ledger: ledger)
        (self.network, self.servers, self.nodes) = (network, servers, nodes)
        try await ClusterFaultTests.waitForAcknowledged(ledger, moreThan: 0, by: 100)
    }

    /// The shares of three live nodes.
    static let balanced = ["a": 3, "b": 3, "c": 2]

    /// Stops the writers and probers should the test end early; the servers and the network go with their
    /// owners (processes killed, namespaces and bridge deleted).
    deinit { ledger.stopping.store(true, ordering: .relaxed) }

    /// How site a is cut off from the other two.
    enum Cut {
        /// Everything: its NATS server and its node reach neither the other servers nor the other nodes.
        case site
        /// Only its NATS server's routes to the other servers; its node still reaches it (and the others).
        case natsRoutes

        var port: Int? { self == .site ? nil : PartitionSites.routePort }
    }

    func cut(_ cut: Cut) throws { try network.cut(0, from: [1, 2], port: cut.port) }
    func heal(_ cut: Cut) throws { try network.heal(0, from: [1, 2], port: cut.port) }

    /// Waits up to `timeout` for b and c to hold every partition; the time it took, or nil (JetStream's own
    /// recovery on the majority side varies, so this is a figure, not an assertion).
    func waitForTakeover(timeout: Duration = .seconds(45)) async -> Duration? {
        try? await ClusterFaultTests.waitForHoldings(["b": 4, "c": 4], seenBy: [nodes[1], nodes[2]], timeout: timeout)
    }

    /// Asks node a directly (no redirect followed) to store a batch of every subject, once it cannot confirm any
    /// lease: each must be refused at once (no wait for a timeout), with a retryable error naming another node
    /// to ask. Returns the slowest refusal.
    func expectDirectRefusals() async throws -> Duration {
        let direct = try ClusterTests.raw(nodes[0])
        defer { direct.close() }
        let others = [nodes[1], nodes[2]].map { "\($0.host):\($0.port)" }
        var refused = 0
        var slowest: Duration = .zero
        for (offset, subject) in ClusterFaultTests.subjects.enumerated() {
            let batch = ClusterTests.batch(id: 800_000 + UInt64(offset), subject: subject, rows: 1)
            let asked = ContinuousClock.now
            let failure = await ClusterTests.failure(inserting: batch, on: direct)
            slowest = max(slowest, ContinuousClock.now - asked)
            guard let failure else { continue }
            refused += 1
            #expect(failure.error.code.isRetryable, "\(failure)")
            #expect(others.contains { failure.error.message.contains($0) }, "names no other node: \(failure)")
        }
        #expect(refused == ClusterFaultTests.subjects.count)
        #expect(slowest < .seconds(1), "node a took \(slowest) to refuse a write")
        return slowest
    }

    /// Waits until every node took a write of every subject (a probe sent after `healed`, not retried); returns
    /// how long after `healed` the last of them was sent.
    func waitForEveryNodeWriting(after healed: ContinuousClock.Instant) async throws -> Duration {
        var recovered: ContinuousClock.Instant?
        do {
            try await waitUntil(
                timeout: .seconds(120),
                "every node to take a write of every subject; not yet: \(probes.notWritten(since: healed, nodes: nodes.count))"
            ) {
                recovered = probes.everyNodeWrote(since: healed, nodes: nodes.count)
                return recovered != nil
            }
        } catch {
            // What it takes to find out why: whether each node still runs, and its log.
            for (id, node) in zip(Self.ids, nodes) {
                print("node \(id) (\(node.host)) \(node.ending ?? "runs"); it logged:\n\(node.logText)")
            }
            throw error
        }
        return (recovered ?? healed) - healed
    }

    /// Waits until the nodes hold their shares again and every prober went once more through every subject;
    /// returns when the last probe after `healed` failed (how long writes kept failing, rebalancing included).
    func waitForSettling(after healed: ContinuousClock.Instant) async throws -> Duration {
        try await ClusterFaultTests.waitForHoldings(Self.balanced, seenBy: nodes, timeout: .seconds(90))
        let balanced = ContinuousClock.now
        try await waitUntil(timeout: .seconds(60), "every node to take a write of every subject once balanced") {
            probes.everyNodeWrote(since: balanced, nodes: nodes.count) != nil
        }
        return (probes.lastFailure(since: healed) ?? healed) - healed
    }

    /// How long after `instant` the NATS servers last logged a new leader: of a stream (a partition stream or
    /// a bucket), and of JetStream's metadata; nil when none was elected after it. What JetStream itself took
    /// to recover, beside what the nodes took.
    func lastLeaderElections(after instant: Date) -> (stream: Duration?, metadata: Duration?) {
        let format = DateFormatter()
        format.dateFormat = "yyyy/MM/dd HH:mm:ss.SSSSSS"
        format.locale = Locale(identifier: "en_US_POSIX")
        var (stream, metadata): (Duration?, Duration?) = (nil, nil)
        for line in servers.flatMap({ $0.logText.split(separator: "\n") }) {
            // "[PID] 2026/12/06 11:46:30.806807 [INF] JetStream cluster new stream leader for '$G > HK_P0'"
            let fields = line.split(separator: " ", maxSplits: 3)
            guard fields.count == 4, let date = format.date(from: "\(fields[1]) \(fields[2])"), date > instant else {
                continue
            }
            let after = Duration.milliseconds(Int64(date.timeIntervalSince(instant) * 1000))
            if line.contains("new stream leader") {
                stream = max(stream ?? .zero, after)
            } else if line.contains("new metadata leader") || line.contains("is new JetStream cluster metadata leader")
            {
                metadata = max(metadata ?? .zero, after)
            }
        }
        return (stream, metadata)
    }

    /// ``lastLeaderElections(after:)`` in words.
    func leaderElections(after instant: Date) -> String {
        let (stream, metadata) = lastLeaderElections(after: instant)
        return "JetStream's last new stream leader \(stream.map { "\($0)" } ?? "none") after it, last new metadata "
            + "leader \(metadata.map { "\($0)" } ?? "none")"
    }

    /// The longest time writes of one subject failed through each node between `from` and `to`, as
    /// `a X, b Y, c Z`.
    func outages(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> String {
        nodes.indices.map { "\(Self.ids[$0]) \(probes.longestOutage(through: $0, from: from, to: to))" }
            .joined(separator: ", ")
    }

    /// Stops the writers and probers, then checks: nothing acknowledged lost or stored twice (read through node
    /// b), and each node's log of ownership changes agrees with the leases it reports, with no line contradicting
    /// the ones before it. Prints the counts as `label`, and, on a loss or with `HK_PARTITION_LOGS` set, every
    /// node's and server's log and which node acknowledged each batch when.
    func finish(_ label: String) async throws {
        ledger.stopping.store(true, ordering: .relaxed)
        for writer in writers { await writer.value }
        await probes.finish()
        let reader = ClusterTests.client(nodes[1], retry: ClusterFaultTests.writerRetry)
        defer { reader.close() }
        let (lost, duplicated) = try await ClusterFaultTests.check(ledger, through: reader, label)
        let (sent, failed) = probes.counts
        print("\(label): \(sent) probes, \(failed) failed")
        // Every change of ownership was logged once: what each node's log says it holds is what it reports as its
        // current leases (once the rebalancing settled).
        var logged: [Set<Int>] = []
        var reported: [Set<Int>?] = []
        var contradictions: [String] = []
        try await waitUntil(timeout: .seconds(30), "the logs to agree with the leases: \(logged) \(reported)") {
            logged = []
            reported = []
            contradictions = []
            for (id, node) in zip(Self.ids, nodes) {
                let (held, wrong) = Self.loggedHoldings(node.logText)
                logged.append(held)
                contradictions += wrong.map { "node \(id): \($0)" }
                reported.append(await Self.currentLeases(of: node, id: id))
            }
            return logged.map(Optional.some) == reported
        }
        #expect(contradictions.isEmpty, "\(contradictions)")
        if lost + duplicated > 0 || ProcessInfo.processInfo.environment["HK_PARTITION_LOGS"] != nil {
            // What it takes to find out why: every node's and server's log, and which node acknowledged each batch
            // when.
            for (id, node) in zip(Self.ids, nodes) { print("node \(id) (\(node.host)) logged:\n\(node.logText)") }
            for server in servers { print("NATS server at \(server.host) logged:\n\(server.logText)") }
            print("acknowledged batches:\n" + ledger.events.withLock { $0.joined(separator: "\n") })
        }
    }

    /// The partitions a node's log says it holds, following `took partition N`, `lost the lease of partition N`,
    /// `handed partition N over` and `released partitions …` in order; and each line that contradicts the lines
    /// before it (a partition taken twice, or lost while not held).
    static func loggedHoldings(_ log: String) -> (held: Set<Int>, contradictions: [String]) {
        var held: Set<Int> = []
        var contradictions: [String] = []
        for line in log.split(separator: "\n") {
            func partition(after prefix: String) -> Int? {
                guard let range = line.range(of: prefix) else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }
            if let index = partition(after: "took partition ") {
                if !held.insert(index).inserted { contradictions.append("took \(index) again: \(line)") }
            } else if let index = partition(after: "lost the lease of partition ")
                ?? partition(after: "handed partition ")
            {
                if held.remove(index) == nil { contradictions.append("gave up \(index) not held: \(line)") }
            } else if line.contains("released partitions ") {
                held = []
            }
        }
        return (held, contradictions)
    }

    /// The partitions `node` reports as its own current leases; nil when it does not answer.
    static func currentLeases(of node: TestServer, id: String) async -> Set<Int>? {
        let client = ClusterTests.client(node, retry: .none)
        defer { client.close() }
        guard let status = try? await client.clusterStatus() else { return nil }
        for partition in status.partitions where partition.lease == .stale {
            // A stale lease names no owner (it may be another node's by now).
            #expect(partition.owner.isEmpty, "node \(id) names an owner for a stale lease: \(partition)")
        }
        return Set(status.partitions.filter { $0.lease == .current && $0.owner == id }.map { Int($0.index) })
    }
}
