import Foundation
import HealthClient
import HealthModel
import HealthWire

/// Pushes batches through one client (so one connection) and counts the rows the server acknowledged.
enum W1Ingest {
    /// The W1 batches of both series for `subject`, stepCount first, each with a fresh random batch id (a
    /// server that remembers applied batch ids must not take a second run for a retry); with `uuids`, each row
    /// with a random version 4 UUID of its own (seeded), as an agent syncing HealthKit's objects sends them.
    static func batches(subject: String, uuids: Bool = false) -> [SampleBatch] {
        let dataset = W1Dataset(subject: subject)
        var random = SplitMix64(seed: 0x5731_5555_4944)
        return W1Dataset.Series.allCases.flatMap { series in
            dataset.batches(series).map { batch in
                var batch = batch
                batch.batchID = HealthClient.makeBatchID()
                if uuids { batch.uuids = (0..<batch.count).map { _ in random.nextUUID() } }
                return batch
            }
        }
    }

    /// Sends `batches` with at most `inFlight` unacknowledged at a time (1: strictly one after the other, each
    /// send waiting for the previous acknowledgement). Returns the rows the acknowledgements report as inserted.
    static func send(_ batches: [SampleBatch], through client: HealthClient, inFlight: Int) async throws -> UInt64 {
        if inFlight <= 1 {
            var inserted: UInt64 = 0
            for batch in batches { inserted += try await client.insert(batch).inserted }
            return inserted
        }
        return try await withThrowingTaskGroup(of: UInt64.self) { group in
            var next = 0
            func submit() {
                let batch = batches[next]
                next += 1
                group.addTask { try await client.insert(batch).inserted }
            }
            while next < min(inFlight, batches.count) { submit() }
            var inserted: UInt64 = 0
            while let rows = try await group.next() {
                inserted += rows
                if next < batches.count { submit() }
            }
            return inserted
        }
    }
}
