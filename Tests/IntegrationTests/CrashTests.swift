import Foundation
import HealthClient
import HealthModel
import HealthPosix
import Synchronization
import TestSupport
import Testing

/// kill -9 during ingest, restart on the same data directory, count: acknowledged = durable, retried ≠ duplicated.
@Suite("hkd crash recovery", .serialized)
struct CrashTests {
    static let source = SourceInfo(name: "Crash", bundleIdentifier: "org.example.crash")

    /// What the inserting client knows: batches acknowledged and batches sent without an answer.
    final class Ledger: Sendable {
        struct State {
            var acknowledged: [UInt64: SampleBatch] = [:]
            var unanswered: [UInt64: SampleBatch] = [:]
        }
        let state = Mutex(State())
    }

    static func batch(round: Int, index: Int, rows: Int) -> SampleBatch {
        var batch = SampleBatch(
            batchID: UInt64(round) << 32 | UInt64(index) + 1, subject: "crash", typeIdentifier: "stepCount",
            unit: "count")
        for row in 0..<rows {
            let start = Int64(round * 1_000_000 + index * 1000 + row) * Micros.second
            batch.append(start: start, end: start + Micros.second, value: Double(row), source: source, uuid: UUID())
        }
        return batch
    }

    @Test("SIGKILL at random moments during ingest loses no acknowledged sample and half-applies nothing")
    func killDuringIngest() async throws {
        let directory = try TestDirectory(prefix: "hkd-crash")
        let ledger = Ledger()
        let rounds = 20
        let seed = TestSeed.value(40)
        var generator = SplitMix64(seed: seed)
        for round in 0..<rounds {
            let hkd = try await TestServer(directory: directory)
            try await verify(hkd, ledger, round: round)
            let writers = (0..<2).map { writer in
                Task {
                    let client = HealthClient(
                        ClientConfiguration(
                            host: "127.0.0.1", port: hkd.port, token: hkd.token, clientName: "crash-\(writer)",
                            requestTimeout: .seconds(5),
                            retry: .none))
                    defer { client.close() }
                    var index = writer
                    while !Task.isCancelled {
                        let batch = Self.batch(round: round, index: index, rows: 1 + (index * 37) % 200)
                        index += 2
                        ledger.state.withLock { $0.unanswered[batch.batchID] = batch }
                        guard let ack = try? await client.insert(batch) else { return }
                        ledger.state.withLock { state in
                            state.unanswered[batch.batchID] = nil
                            if ack.inserted == UInt64(batch.count) { state.acknowledged[batch.batchID] = batch }
                        }
                    }
                }
            }
            // Once the round's ingest is under way (a batch acknowledged), hkd is killed at a random (seeded)
            // moment of it: that sleep is the behaviour under test.
            try await waitUntil("a batch of round \(round) acknowledged") {
                ledger.state.withLock { $0.acknowledged.keys.contains { $0 >> 32 == UInt64(round) } }
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...230, using: &generator)))
            await hkd.kill()
            for writer in writers { writer.cancel() }
            for writer in writers { await writer.value }
        }
        // A last start: everything acknowledged is there once; re-sending every unanswered batch (as the client
        // library's retry does) leaves each one stored exactly once.
        let hkd = try await TestServer(directory: directory)
        try await verify(hkd, ledger, round: rounds)
        let client = hkd.client()
        defer { client.close() }
        let unanswered = ledger.state.withLock { $0.unanswered }
        for batch in unanswered.values {
            let ack = try await client.insert(batch)
            #expect(ack.inserted + ack.duplicates == UInt64(batch.count))
        }
        let stored = try await client.samples("stepCount", subject: "crash")
        let expected =
            ledger.state.withLock { $0.acknowledged.values.reduce(0) { $0 + $1.count } }
            + unanswered.values.reduce(0) { $0 + $1.count }
        #expect(stored.count == expected, "seed \(seed)")
        #expect(Set(stored.map(\.uuid)).count == stored.count)
        await hkd.stop()
        #expect(ledger.state.withLock { $0.acknowledged.count } >= rounds, "too few batches acknowledged to mean much")
    }

    /// After a restart: every acknowledged batch is stored whole and once; every unanswered batch is stored whole
    /// or not at all; nothing else is stored.
    func verify(_ hkd: TestServer, _ ledger: Ledger, round: Int) async throws {
        let client = hkd.client()
        defer { client.close() }
        let stored = try await client.samples("stepCount", subject: "crash")
        var countOfUUID: [UUID: Int] = [:]
        for sample in stored { countOfUUID[sample.uuid, default: 0] += 1 }
        #expect(countOfUUID.values.allSatisfy { $0 == 1 }, "round \(round): a sample is stored twice")
        let (acknowledged, unanswered) = ledger.state.withLock { ($0.acknowledged, $0.unanswered) }
        var accounted = 0
        for batch in acknowledged.values {
            let present = batch.uuids!.filter { countOfUUID[$0] != nil }.count
            #expect(
                present == batch.count,
                "round \(round): acknowledged batch \(batch.batchID) has \(present) of \(batch.count) rows")
            accounted += present
        }
        for batch in unanswered.values {
            let present = batch.uuids!.filter { countOfUUID[$0] != nil }.count
            #expect(
                present == 0 || present == batch.count,
                "round \(round): batch \(batch.batchID) is half applied (\(present) of \(batch.count))")
            accounted += present
        }
        #expect(accounted == stored.count, "round \(round): \(stored.count - accounted) samples nobody sent")
    }
}
