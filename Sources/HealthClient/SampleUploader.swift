import HealthModel
import HealthWire

/// What became of one uploaded batch.
public enum UploadOutcome: Hashable, Sendable {
    /// The server acknowledged the batch.
    case acknowledged(InsertAck)
    /// The server refused the batch for good (after retries of retryable errors); its rows are not stored.
    case rejected(batchID: UInt64, rows: Int, error: HealthClientError)
}

/// Automatic batching for ingest agents: add samples one at a time or in bursts; they are sent in batches when
/// a batch is full (`maxRows`) or has waited `maxDelay`, with up to `maxInFlight` batches pipelined.
///
/// Every batch's fate is reported on ``outcomes`` (acknowledged, or rejected with the server's error).
/// Retryable failures are retried by the client with the same batch id. Call ``finish()`` to flush and wait.
public actor SampleUploader {
    public nonisolated let outcomes: AsyncStream<UploadOutcome>
    private let continuation: AsyncStream<UploadOutcome>.Continuation
    private let client: HealthClient
    private let maxRows: Int
    private let maxDelay: Duration
    private let maxInFlight: Int

    private struct Key: Hashable {
        var subject: String
        var type: String
        var unit: String
    }

    private var open: [Key: (batch: SampleBatch, opened: ContinuousClock.Instant)] = [:]
    private var inFlight: [Task<Void, Never>] = []
    private var timer: Task<Void, Never>?

    /// - Parameters:
    ///   - maxRows: rows per batch (at most the server's `maxBatchRows`).
    ///   - maxDelay: longest a sample waits before its batch is sent anyway.
    ///   - maxInFlight: batches sent and not yet acknowledged, at most.
    public init(
        client: HealthClient, maxRows: Int = 10_000, maxDelay: Duration = .milliseconds(200), maxInFlight: Int = 4
    ) {
        self.client = client
        self.maxRows = max(1, maxRows)
        self.maxDelay = maxDelay
        self.maxInFlight = max(1, maxInFlight)
        (outcomes, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Adds one sample; sends its batch when full. Waits when `maxInFlight` batches are outstanding.
    public func add(_ sample: Sample) async {
        let key = Key(subject: sample.subject, type: sample.type.identifier, unit: sample.unit.symbol)
        var entry =
            open[key] ?? (
                SampleBatch(
                    batchID: HealthClient.makeBatchID(), subject: key.subject, typeIdentifier: key.type, unit: key.unit,
                    uuids: []), .now
            )
        entry.batch.append(
            start: sample.start, end: sample.end, value: sample.value, source: sample.source, uuid: sample.uuid,
            metadata: sample.metadata)
        if entry.batch.count >= maxRows {
            open[key] = nil
            await send(entry.batch)
        } else {
            open[key] = entry
            startTimerIfNeeded()
        }
    }

    /// Adds many samples.
    public func add(contentsOf samples: some Sequence<Sample>) async {
        for sample in samples { await add(sample) }
    }

    /// Sends every open batch now, without waiting for acknowledgements.
    public func flush() async {
        let batches = open.values.map(\.batch)
        open.removeAll()
        for batch in batches { await send(batch) }
    }

    /// Flushes, waits for every acknowledgement, and ends ``outcomes``.
    public func finish() async {
        await flush()
        timer?.cancel()
        timer = nil
        for task in inFlight { await task.value }
        inFlight.removeAll()
        continuation.finish()
    }

    private func send(_ batch: SampleBatch) async {
        while inFlight.count >= maxInFlight {
            let oldest = inFlight.removeFirst()
            await oldest.value
        }
        let client = client
        let continuation = continuation
        inFlight.append(
            Task {
                do throws(HealthClientError) {
                    continuation.yield(.acknowledged(try await client.insert(batch)))
                } catch {
                    continuation.yield(.rejected(batchID: batch.batchID, rows: batch.count, error: error))
                }
            })
    }

    private func startTimerIfNeeded() {
        guard timer == nil else { return }
        let delay = maxDelay
        timer = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: delay)
                guard let self, await self.sendStaleBatches() else { return }
            }
        }
    }

    /// Sends batches older than `maxDelay`; returns whether any batch is still open (the timer keeps running).
    private func sendStaleBatches() async -> Bool {
        let now = ContinuousClock.now
        for (key, entry) in open where now - entry.opened >= maxDelay {
            open[key] = nil
            await send(entry.batch)
        }
        if open.isEmpty {
            timer = nil
            return false
        }
        return true
    }
}
