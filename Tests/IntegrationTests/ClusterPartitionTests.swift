import Foundation
import TestSupport
import Testing

/// Network partitions on one host (``PartitionSites``: three sites in Linux network namespaces, a NATS server and
/// an hkd node in each, writers and probers through every node): site a cut off, its NATS server alone cut off
/// from the others, and a flapping link. Each prints how long writes failed and checks that nothing acknowledged
/// is lost or stored twice and that the ownership logs agree with the leases. Serialized: each scenario runs
/// three NATS servers and three nodes, and its timings are figures in RELIABILITY.md. Skipped, with the reason,
/// where namespaces cannot be made (not root).
@Suite(
    "hkd cluster: network partitions (Linux network namespaces)", .serialized,
    .disabled(
        if: NamespaceNetwork.unavailableReason != nil, Comment(rawValue: NamespaceNetwork.unavailableReason ?? ""))
)
struct ClusterPartitionTests {
    @Test(
        "A site cut off from the others: its node accepts no write, the others take its partitions, and after the heal every node writes again; nothing acknowledged is lost or stored twice"
    )
    func isolatedSite() async throws {
        try await cutOff(.site, seed: TestSeed.value(3301), label: "site a cut off")
    }

    @Test(
        "A NATS server cut off from the other servers while its node still reaches it: the node stops serving, the others take its partitions, and after the heal every node writes again; nothing acknowledged is lost or stored twice"
    )
    func isolatedNATSServer() async throws {
        try await cutOff(.natsRoutes, seed: TestSeed.value(3302), label: "NATS server n1 cut off")
    }

    /// Cuts site a off as `cut` says until b and c hold every partition (or 45 s), checks that node a then
    /// refuses writes at once, heals, and measures until every node writes every subject again.
    func cutOff(_ cut: PartitionSites.Cut, seed: UInt64, label: String) async throws {
        let sites = try await PartitionSites(seed: seed)
        let cutAt = ContinuousClock.now
        let beforeCut = sites.ledger.count
        try sites.cut(cut)
        // The other two sites take site a's partitions once its leases expire (--lease-ttl 10).
        let takeover = await sites.waitForTakeover()
        // Node a cannot confirm any lease now (its own NATS server has no quorum, or it has no NATS server).
        let slowest = try await sites.expectDirectRefusals()
        let duringCut = sites.ledger.count - beforeCut
        try sites.heal(cut)
        let (healedAt, healedDate) = (ContinuousClock.now, Date())
        let recovery = try await sites.waitForEveryNodeWriting(after: healedAt)
        let settled = try await sites.waitForSettling(after: healedAt)
        print(
            "\(label) for \(healedAt - cutAt): b and c held every partition "
                + "\(takeover.map { "\($0)" } ?? "not within 45 s") after the cut; \(duringCut) samples acknowledged "
                + "during the cut; node a refused every direct write (the slowest in \(slowest)); longest time a "
                + "subject took no write during the cut, through \(sites.outages(from: cutAt, to: healedAt)); "
                + "after the heal every node took a write of every subject within \(recovery), the last write "
                + "failed \(settled) after it (\(sites.leaderElections(after: healedDate)))")
        try await sites.finish(label)
    }

    @Test(
        "A flapping link (site a cut off for 2 s and back for 3 s, three times; then 5 s and 5 s, three times) under writers: nothing acknowledged is lost or stored twice, and every node writes every subject soon after"
    )
    func flappingLink() async throws {
        let sites = try await PartitionSites(seed: TestSeed.value(3303))
        // The fault's own schedule (not a wait for some state): cuts shorter than the NATS servers' ping timeout
        // (2 to 3 s), then cuts longer than their election timeout (4 to 9 s) and shorter than the lease TTL.
        var phases: [(down: Int, up: Int, from: ContinuousClock.Instant)] = []
        for (down, up) in [(2, 3), (5, 5)] {
            phases.append((down, up, ContinuousClock.now))
            for _ in 0..<3 {
                try sites.cut(.site)
                try await Task.sleep(for: .seconds(down))
                try sites.heal(.site)
                try await Task.sleep(for: .seconds(up))
            }
        }
        let (healedAt, healedDate) = (ContinuousClock.now, Date())
        let recovery = try await sites.waitForEveryNodeWriting(after: healedAt)
        let settled = try await sites.waitForSettling(after: healedAt)
        let ends = phases.dropFirst().map(\.from) + [healedAt]
        let outages = zip(phases, ends).map { phase, end in
            "down \(phase.down) s, up \(phase.up) s: through \(sites.outages(from: phase.from, to: end))"
        }
        print(
            "flapping link, longest time a subject took no write while it flapped (\(outages.joined(separator: "; "))); "
                + "after the last heal every node took a write of every subject within \(recovery), the last write "
                + "failed \(settled) after it (\(sites.leaderElections(after: healedDate)))")
        try await sites.finish("flapping link")
    }
}
