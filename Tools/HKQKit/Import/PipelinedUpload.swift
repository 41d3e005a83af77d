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
/// A batch the server refuses for its content is sent again in halves until each refused row stands alone
/// (``RefusalIsolation``): those rows are listed in ``refused``, the rest stored.
///
/// Threading: a value owned by one task; call ``send(_:)`` and ``finish()`` from that task in turn.
struct PipelinedUpload {
    /// What the server acknowledged for one type.
    struct Counts: Hashable, Sendable {
        var inserted: Int = 0
        var duplicates: Int = 0

        /// Adds `other`'s counts to these.
        mutating func add(_ other: Counts) {
            inserted += other.inserted
            duplicates += other.duplicates
        }
    }

    /// A refused row: its type, when it starts, its source, and the server's refusal.
    struct RefusedRow: Sendable {
        var type: String
        var start: Timestamp
        var source: String
        var error: HealthClientError
    }

    private struct Acknowledged: Sendable {
        var batch: SampleBatch
        var outcome: Result<InsertAck, HealthClientError>
    }

    /// Batches sent and not yet acknowledged, at most.
    let maxInFlight: Int
    private let client: HealthClient
    private var inFlight: [Task<Acknowledged, any Error>] = []
    /// Acknowledged counts by short type identifier.
    private(set) var counts: [String: Counts] = [:]
    /// Rows the server refused, in the order met.
    private(set) var refused: [RefusedRow] = []

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
        inFlight.append(
            Task {
                do {
                    return Acknowledged(batch: sent, outcome: .success(try await client.insert(sent)))
                } catch let error as HealthClientError where RefusalIsolation.refusesContent(error) {
                    return Acknowledged(batch: sent, outcome: .failure(error))
                }
            })
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
        counts.values.reduce(into: Counts()) { $0.add($1) }
    }

    private mutating func collectOldest() async throws {
        let acknowledged = try await inFlight.removeFirst().value
        let batch = acknowledged.batch
        var ack = Counts()
        switch acknowledged.outcome {
        case .success(let reply):
            ack = Counts(inserted: Int(reply.inserted), duplicates: Int(reply.duplicates))
        case .failure:
            var refusedRows: [RefusedRow] = []
            ack = try await RefusalIsolation.send(rowsOf: batch, client: client, refusedWhole: true) { row, error in
                let source = batch.sources[Int(batch.sourceIndices[row])].name
                refusedRows.append(
                    RefusedRow(type: batch.typeIdentifier, start: batch.starts[row], source: source, error: error))
            }
            refused += refusedRows
        }
        counts[batch.typeIdentifier, default: Counts()].add(ack)
    }
}
