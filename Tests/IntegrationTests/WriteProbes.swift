import Foundation
import HealthClient
import HealthModel
import Synchronization
import TestSupport

/// How available writes are, as clients see them: one prober per node inserts a one-row batch of each subject in
/// turn through that node (following a redirect to the owner, never retrying, waiting at most
/// ``requestTimeout``), and every attempt is recorded with when it was sent and whether it was acknowledged. The
/// acknowledged batches go into the ledger like the writers' batches.
final class WriteProbes: Sendable {
    /// One insert a prober sent.
    struct Attempt: Sendable {
        var node: Int
        var subject: Int
        var sent: ContinuousClock.Instant
        var acknowledged: Bool
        /// Why it failed.
        var error: String?
    }

    /// How long a probe waits for its answer: an insert hung on an isolated node counts as failed after it.
    static let requestTimeout: Duration = .seconds(2)
    /// The least time between two attempts of one prober, so that a node refusing at once is not asked thousands
    /// of times a second (pacing the load, not a wait for some state).
    static let spacing: Duration = .milliseconds(20)

    let subjects: [String]
    private let attempts = Mutex<[Attempt]>([])
    private let probers: Mutex<[Task<Void, Never>]>

    /// Starts probing `nodes` (prober `i` through node `i`) with `subjects`, until `ledger` says stop.
    init(_ nodes: [TestServer], subjects: [String], ledger: ClusterFaultTests.Ledger) {
        self.subjects = subjects
        probers = Mutex([])
        let tasks = nodes.enumerated().map { index, node in
            Task { [self, host = node.host, port = node.port] in
                let client = HealthClient(
                    ClientConfiguration(
                        host: host, port: port, token: "", clientName: "probe-\(index)",
                        requestTimeout: Self.requestTimeout, retry: .none))
                defer { client.close() }
                // Ids below 4.2 million: ClusterTests.batch derives the samples' times from them.
                var id = 1_000_000 * (UInt64(index) + 1)
                while !ledger.stopping.load(ordering: .relaxed) {
                    for (offset, subject) in subjects.enumerated() {
                        id += 1
                        let sent = ContinuousClock.now
                        let batch = ClusterTests.batch(id: id, subject: subject, rows: 1)
                        var failure: String?
                        do {
                            _ = try await client.insert(batch)
                            try? ledger.record(batch, by: "probe via \(host):\(port)")
                        } catch {
                            failure = "\(error)"
                        }
                        let attempt = Attempt(
                            node: index, subject: offset, sent: sent, acknowledged: failure == nil, error: failure)
                        attempts.withLock { $0.append(attempt) }
                        try? await Task.sleep(until: sent + Self.spacing)
                    }
                }
            }
        }
        probers.withLock { $0 = tasks }
    }

    /// Waits for the probers to end (once the ledger says stop).
    func finish() async {
        for task in probers.withLock({ $0 }) { await task.value }
    }

    /// The attempts through `node`, by subject, in the order sent.
    private func attempts(through node: Int) -> [[Attempt]] {
        let all = attempts.withLock { $0 }.filter { $0.node == node }
        return subjects.indices.map { subject in all.filter { $0.subject == subject } }
    }

    /// The longest time writes of one subject through `node` failed, within `from` to `to`: from the first failed
    /// attempt of a run of failures to the next acknowledged one (or to `to`); zero when none failed.
    func longestOutage(through node: Int, from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> Duration {
        var longest: Duration = .zero
        for attempts in attempts(through: node) {
            var failingSince: ContinuousClock.Instant?
            for attempt in attempts where attempt.sent >= from && attempt.sent <= to {
                if attempt.acknowledged {
                    if let since = failingSince { longest = max(longest, attempt.sent - since) }
                    failingSince = nil
                } else if failingSince == nil {
                    failingSince = attempt.sent
                }
            }
            if let since = failingSince { longest = max(longest, to - since) }
        }
        return longest
    }

    /// When every node had taken a write of every subject sent at `since` or later (the last of those first
    /// acknowledgements); `nil` while some node has not.
    func everyNodeWrote(since: ContinuousClock.Instant, nodes: Int) -> ContinuousClock.Instant? {
        var latest = since
        for node in 0..<nodes {
            for attempts in attempts(through: node) {
                guard let first = attempts.first(where: { $0.sent >= since && $0.acknowledged }) else { return nil }
                latest = max(latest, first.sent)
            }
        }
        return latest
    }

    /// The node and subject of each pair that took no write sent at `since` or later, with its last failure.
    func notWritten(since: ContinuousClock.Instant, nodes: Int) -> [String] {
        (0..<nodes).flatMap { node in
            attempts(through: node).enumerated().compactMap { subject, attempts in
                let recent = attempts.filter { $0.sent >= since }
                guard !recent.contains(where: \.acknowledged) else { return nil }
                return "node \(node) \(subjects[subject]): \(recent.last?.error ?? "not tried")"
            }
        }
    }

    /// The last attempt sent at `since` or later that failed, through any node; `nil` when none did.
    func lastFailure(since: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        attempts.withLock { $0 }.filter { $0.sent >= since && !$0.acknowledged }.map(\.sent).max()
    }

    /// How many attempts were sent, and how many failed.
    var counts: (sent: Int, failed: Int) {
        attempts.withLock { all in (all.count, all.count(where: { !$0.acknowledged })) }
    }
}
