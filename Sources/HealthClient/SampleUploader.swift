import HealthModel
import HealthWire

/// What became of one uploaded batch.
public enum UploadOutcome: Hashable, Sendable {
    /// The server acknowledged the batch.
    case acknowledged(InsertAck)
    /// The server refused the batch for good (a permanent error: an invalid sample, a refused token); its rows are
    /// not stored. Retryable failures are never reported: the uploader keeps the batch and sends it again.
    case rejected(batchID: UInt64, rows: Int, error: HealthClientError)
}

/// Automatic batching for ingest agents: add samples one at a time or in bursts; they are sent in batches when
/// a batch is full (`maxRows`) or has waited `maxDelay`, with up to `maxInFlight` batches pipelined.
///
/// Every batch's fate is reported on ``outcomes``: acknowledged, or rejected with the server's permanent error.
/// A batch is kept until one of the two: retryable failures (the server restarting or away, busy, storage
/// unavailable) are retried with the same batch id, by the client within its retry budget, then again after a
/// pause of the budget's longest backoff, for as long as it takes. The rows held stay bounded: at most
/// `maxInFlight` batches sent and unanswered, plus the batch being filled for each subject, type and unit; while
/// `maxInFlight` batches wait, ``add(_:)`` waits too (backpressure). Call ``finish()`` to flush and wait.
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

    /// Flushes, waits until every batch is acknowledged or rejected for good, and ends ``outcomes``.
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
        inFlight.append(Task { continuation.yield(await Self.deliver(batch, client: client)) })
    }

    /// Sends `batch` until the server acknowledges it or refuses it for good. Each insert retries within the
    /// client's budget; after a budget spent on retryable failures, the batch is sent again after the longest
    /// backoff.
    private static func deliver(_ batch: SampleBatch, client: HealthClient) async -> UploadOutcome {
        while true {
            do throws(HealthClientError) {
                return .acknowledged(try await client.insert(batch))
            } catch  where error.isRetryable {
                try? await Task.sleep(for: client.configuration.retry.maxBackoff)
            } catch {
                return .rejected(batchID: batch.batchID, rows: batch.count, error: error)
            }
        }
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
