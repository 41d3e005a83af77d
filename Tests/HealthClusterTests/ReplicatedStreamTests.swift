import Foundation
import HealthCluster
import HealthEngine
import HealthModel
import HealthStorage
import Testing
import TestSupport

/// The change log on a real 3-server NATS cluster (JetStream clustered, routes on loopback, a store each) with
/// three replicas per stream: what a quorum means for acknowledged changes.
@Suite("JetStream change log on a 3-server NATS cluster", .serialized)
struct ReplicatedStreamTests {
    /// What the writer knows: the samples of acknowledged batches, and the batches that got an error.
    struct Ledger {
        var acknowledged: [String: Set<UUID>] = [:]
        var refused: [String: Set<UUID>] = [:]
        var nextID: UInt64 = 0
        let subjects = (0..<6).map { "subject-\($0)" }

        mutating func nextBatch() -> SampleBatch {
            nextID += 1
            return stepBatch(id: nextID, subject: subjects[Int(nextID) % subjects.count], from: Int(nextID) * 10)
        }

        mutating func record(_ batch: SampleBatch, acknowledged ok: Bool) throws {
            let uuids = try batch.samples().map(\.uuid)
            if ok {
                acknowledged[batch.subject, default: []].formUnion(uuids)
            } else {
                refused[batch.subject, default: []].formUnion(uuids)
            }
        }
    }

    /// Inserts `batch`, retrying (after catching up any partition whose last publish went unanswered) until it is
    /// acknowledged or `timeout` passed.
    static func insertRetrying(
        _ batch: SampleBatch, into durable: DurableStore, log: JetStreamChangeLog, timeout: Duration
    ) async throws {
        try await waitUntil(timeout: timeout, "batch \(batch.batchID) to be acknowledged") {
            for index in log.uncertainPartitions { _ = try? log.catchUp(index, into: durable.store) }
            return (try? durable.insert(batch)) != nil
        }
    }

    @Test(
        "Replicas 3: with one server killed writes go on, with two they are refused retryably, and nothing acknowledged is lost or doubled"
    )
    func quorum() async throws {
        var servers = try await NATSServer.cluster(size: 3)
        let urls = servers.map(\.url).joined(separator: ",")
        // JetStream elects its leaders once the routes are up: wait until the cluster can be created.
        var opened: (DurableStore, JetStreamChangeLog)?
        var lastError = ""
        try await waitUntil(timeout: .seconds(60), "the NATS cluster to create replicated streams") {
            do {
                opened = try openNode(url: urls, partitions: 2, replicas: 3, wait: .seconds(2))
            } catch {
                // Timeouts until the routes are up and the metadata leader is elected: say so once each.
                if "\(error)" != lastError { print("NATS cluster not ready yet: \(error)") }
                lastError = "\(error)"
            }
            return opened != nil
        }
        let (durable, log) = try #require(opened)
        #expect(try log.jetStream.streamState(log.layout.streamName(0)).replicas == 3)
        let members = try log.jetStream.servers()
        #expect(members.jetStream == ["n1", "n2", "n3"] && members.clustered && members.count == 3, "\(members)")
        var ledger = Ledger()
        for _ in 0..<20 {
            let batch = ledger.nextBatch()
            try await Self.insertRetrying(batch, into: durable, log: log, timeout: .seconds(30))
            try ledger.record(batch, acknowledged: true)
        }

        // One of three down (not the one this node is connected to): a quorum is left, writes go on.
        await servers[2].kill()
        for _ in 0..<20 {
            let batch = ledger.nextBatch()
            try await Self.insertRetrying(batch, into: durable, log: log, timeout: .seconds(30))
            try ledger.record(batch, acknowledged: true)
        }

        // Two of three down: no quorum, so no acknowledgement; the refusal is retryable.
        await servers[1].kill()
        for _ in 0..<3 {
            let batch = ledger.nextBatch()
            do {
                _ = try durable.insert(batch)
                Issue.record("batch \(batch.batchID) was acknowledged without a quorum")
                try ledger.record(batch, acknowledged: true)
            } catch let error as HealthError {
                #expect(error.code.rawValue == ErrorCode.storageUnavailable.rawValue, "\(error)")
                #expect(error.isRetryable)
                try ledger.record(batch, acknowledged: false)
            }
        }

        // A server back: every acknowledged sample is in the streams once; nothing else but what was refused.
        servers[1] = try await servers[1].restart()
        let survivors = [servers[0].url, servers[1].url].joined(separator: ",")
        var rebuilt: (DurableStore, JetStreamChangeLog)?
        try await waitUntil(timeout: .seconds(60), "the streams to be readable again") {
            rebuilt = try? openNode(url: survivors, partitions: 2, replicas: 3, wait: .seconds(2))
            return rebuilt != nil
        }
        let reader = try #require(rebuilt).0
        var lost = 0
        var duplicated = 0
        var stray = 0
        for subject in ledger.subjects {
            let uuids = try reader.store.samples(subject: subject, type: "stepCount").uuids
            let stored = Set(uuids)
            duplicated += uuids.count - stored.count
            lost += (ledger.acknowledged[subject] ?? []).subtracting(stored).count
            stray +=
                stored.subtracting(ledger.acknowledged[subject] ?? []).subtracting(ledger.refused[subject] ?? [])
                .count
        }
        let total = ledger.acknowledged.values.reduce(0) { $0 + $1.count }
        print("3-server NATS cluster, replicas 3: acknowledged \(total), lost \(lost), duplicated \(duplicated)")
        #expect(total == 40 * 5)
        #expect(lost == 0)
        #expect(duplicated == 0)
        #expect(stray == 0)
    }
}
