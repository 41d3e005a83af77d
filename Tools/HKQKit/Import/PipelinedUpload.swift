import HealthClient
import HealthModel
import HealthWire

/// Sends batches to the server with up to ``maxInFlight`` of them awaiting their acknowledgement, and counts per
/// type what the server stored (new rows) and what it already held (duplicates).
///
/// Each batch gets a fresh batch id for this run: the client retries a failed send with that same id, while
/// re-importing a file is de-duplicated row by row through the content-derived UUIDs, so the acknowledgement
/// says honestly how many rows were new (a repeated batch id would repeat the first run's acknowledgement).
///
/// Threading: a value owned by one task; call ``send(_:)`` and ``finish()`` from that task in turn.
struct PipelinedUpload {
    /// What the server acknowledged for one type.
    struct Counts: Hashable, Sendable {
        var inserted: Int = 0
        var duplicates: Int = 0
    }

    private struct Acknowledged: Sendable {
        var type: String
        var ack: InsertAck
    }

    /// Batches sent and not yet acknowledged, at most.
    let maxInFlight: Int
    private let client: HealthClient
    private var inFlight: [Task<Acknowledged, any Error>] = []
    /// Acknowledged counts by short type identifier.
    private(set) var counts: [String: Counts] = [:]

    /// An upload through `client` keeping at most `maxInFlight` batches unacknowledged.
    init(client: HealthClient, maxInFlight: Int) {
        self.client = client
        self.maxInFlight = max(1, maxInFlight)
    }

    /// Sends `batch`, first waiting for the oldest acknowledgement when the window is full; rethrows a failure of
    /// an earlier batch.
    mutating func send(_ batch: SampleBatch) async throws {
        if inFlight.count >= maxInFlight { try await collectOldest() }
        var batch = batch
        batch.batchID = HealthClient.makeBatchID()
        let client = client
        let sent = batch
        inFlight.append(Task { Acknowledged(type: sent.typeIdentifier, ack: try await client.insert(sent)) })
    }

    /// Waits for every acknowledgement; rethrows the first failure.
    mutating func finish() async throws {
        while !inFlight.isEmpty { try await collectOldest() }
    }

    /// Waits for the batches still in flight after a failure, ignoring their outcome, so none outlives the
    /// connection.
    mutating func abandon() async {
        for task in inFlight { _ = try? await task.value }
        inFlight.removeAll()
    }

    /// The sums over every type.
    var total: Counts {
        counts.values.reduce(into: Counts()) { total, counts in
            total.inserted += counts.inserted
            total.duplicates += counts.duplicates
        }
    }

    private mutating func collectOldest() async throws {
        let acknowledged = try await inFlight.removeFirst().value
        counts[acknowledged.type, default: Counts()].inserted += Int(acknowledged.ack.inserted)
        counts[acknowledged.type, default: Counts()].duplicates += Int(acknowledged.ack.duplicates)
    }
}
