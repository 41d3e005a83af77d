import Foundation
import HealthCodec
import HealthModel
import HealthWire
import Synchronization

/// The library an ingest agent or a tool embeds to talk to `hkd`.
///
/// Connects lazily and reconnects after a lost connection; retries retryable errors (busy, storage
/// unavailable, connection lost, timeout) with the same batch id, so a retried insert is recognised by the
/// server; never retries permanent errors. Thread-safe: share one client between tasks; requests are
/// pipelined on one connection.
///
/// ```swift
/// let client = HealthClient(ClientConfiguration(host: "127.0.0.1", port: 7420, token: token))
/// let ack = try await client.insert(samples)
/// let today = try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum,
///                                         filter: SampleFilter(date: DatePredicate(start: midnight)))
/// ```
public final class HealthClient: Sendable {
    public let configuration: ClientConfiguration
    private let current = Mutex<HealthConnection?>(nil)

    public init(_ configuration: ClientConfiguration) {
        self.configuration = configuration
    }

    /// Connects now (instead of at the first request), surfacing connection and authentication errors early.
    @discardableResult
    public func connect() async throws(HealthClientError) -> Welcome {
        try await connection().welcome
    }

    /// Closes the connection; a later request reconnects.
    public func close() {
        let connection = current.withLock { connection in
            defer { connection = nil }
            return connection
        }
        connection?.close()
    }

    /// The open connection, or a new one.
    public func connection() async throws(HealthClientError) -> HealthConnection {
        if let connection = current.withLock({ $0 }), !connection.isClosed { return connection }
        let configuration = configuration
        let result: Result<HealthConnection, HealthClientError> = await withCheckedContinuation { continuation in
            // Connecting blocks; keep it off the cooperative pool.
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(HealthClientError) in try HealthConnection.open(configuration) })
            }
        }
        let fresh = try result.get()
        return current.withLock { connection in
            if let existing = connection, !existing.isClosed {
                fresh.close()
                return existing
            }
            connection = fresh
            return fresh
        }
    }

    /// Sends a request, reconnecting and retrying retryable failures per the retry policy.
    public func request(_ message: Message) async throws(HealthClientError) -> [Message] {
        var attempt = 1
        while true {
            do {
                return try await connection().request(message)
            } catch {
                guard error.isRetryable, attempt < configuration.retry.maxAttempts else { throw error }
                attempt += 1
                try? await Task.sleep(for: configuration.retry.backoff(beforeAttempt: attempt))
            }
        }
    }

    func requestOne(_ message: Message) async throws(HealthClientError) -> Message {
        let replies = try await request(message)
        guard replies.count == 1, let reply = replies.first else {
            throw .local(.malformedPayload, "expected one reply to \(message.kind), got \(replies.count)")
        }
        return reply
    }

    static func unexpected(_ reply: Message, to kind: MessageKind) -> HealthClientError {
        .local(.malformedPayload, "the server answered \(kind) with \(reply.kind)")
    }

    // MARK: Ingest

    /// A fresh random batch id.
    public static func makeBatchID() -> UInt64 { UInt64.random(in: 1...UInt64.max) }

    /// Stores one batch; retried with the same batch id after retryable errors.
    public func insert(_ batch: SampleBatch) async throws(HealthClientError) -> InsertAck {
        do {
            try batch.validateShape()
        } catch let error as HealthError {
            throw .local(error.code, error.message)
        } catch {
            throw .local(.internalError, "\(error)")
        }
        let reply = try await requestOne(.insert(Insert(batch: batch)))
        guard case .insertAck(let ack) = reply else { throw Self.unexpected(reply, to: .insert) }
        return ack
    }

    /// Stores samples, grouped into batches by subject, type and unit (at most `maxBatchRows` rows each,
    /// default the server's announced limit). Returns one acknowledgement per batch.
    public func insert(_ samples: [Sample], maxBatchRows: Int? = nil) async throws(HealthClientError) -> [InsertAck] {
        var limit = maxBatchRows ?? 0
        if limit <= 0 { limit = Int(clamping: try await connection().welcome.limits.maxBatchRows) }
        var acks: [InsertAck] = []
        for batch in SampleBatch.grouping(samples, maxRows: limit, makeBatchID: Self.makeBatchID) {
            acks.append(try await insert(batch))
        }
        return acks
    }

    /// Deletes samples by UUID or by filter; returns how many were deleted.
    public func delete(_ type: String, subject: String, _ selection: DeleteSelection) async throws(HealthClientError) -> UInt64 {
        let reply = try await requestOne(.delete(Delete(subject: subject, type: type, selection: selection)))
        guard case .deleteAck(let ack) = reply else { throw Self.unexpected(reply, to: .delete) }
        return ack.deleted
    }

    // MARK: Queries

    /// HKSampleQuery: matching samples as columnar batches, in the requested order (values in `unit`, or canonical).
    public func sampleBatches(
        _ type: String, subject: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending, limit: Int = 0,
        unit: String = ""
    ) async throws(HealthClientError) -> [SampleBatch] {
        let query = SampleQuery(subject: subject, type: type, filter: filter, sort: sort, limit: UInt64(max(0, limit)), unit: unit)
        return try await request(.sampleQuery(query)).map { reply throws(HealthClientError) in
            guard case .sampleResult(let result) = reply else { throw Self.unexpected(reply, to: .sampleQuery) }
            return result.batch
        }
    }

    /// HKSampleQuery: matching samples, in the requested order.
    public func samples(
        _ type: String, subject: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending, limit: Int = 0,
        unit: String = ""
    ) async throws(HealthClientError) -> [Sample] {
        let batches = try await sampleBatches(type, subject: subject, filter: filter, sort: sort, limit: limit, unit: unit)
        do {
            return try batches.flatMap { try $0.samples() }
        } catch let error as HealthError {
            throw .local(error.code, error.message)
        } catch {
            throw .local(.internalError, "\(error)")
        }
    }

    /// HKStatisticsQuery. "No data" is thrown as ``ErrorCode/noData``.
    public func statistics(
        _ type: String, subject: String, options: StatisticsOptions, filter: SampleFilter = .all, unit: String = ""
    ) async throws(HealthClientError) -> StatisticsResult {
        let reply = try await requestOne(
            .statisticsQuery(StatisticsQuery(subject: subject, type: type, filter: filter, options: options, unit: unit)))
        guard case .statisticsResult(let result) = reply else { throw Self.unexpected(reply, to: .statisticsQuery) }
        return result
    }

    /// HKStatisticsCollectionQuery: statistics per calendar bucket.
    public func collection(_ query: CollectionQuery) async throws(HealthClientError) -> CollectionResult {
        var merged = CollectionResult(unit: "", buckets: [])
        for reply in try await request(.collectionQuery(query)) {
            guard case .collectionResult(let part) = reply else { throw Self.unexpected(reply, to: .collectionQuery) }
            merged.unit = part.unit
            merged.buckets += part.buckets
        }
        return merged
    }

    /// The sources of a type for a subject, highest priority first.
    public func sourcePriority(_ type: String, subject: String) async throws(HealthClientError) -> [SourceInfo] {
        let reply = try await requestOne(.getSourcePriority(GetSourcePriority(subject: subject, type: type)))
        guard case .sourcePriority(let result) = reply else { throw Self.unexpected(reply, to: .getSourcePriority) }
        return result.sources
    }

    /// Puts the named sources first, in this order; returns the resulting order.
    public func setSourcePriority(_ type: String, subject: String, order: [String]) async throws(HealthClientError) -> [SourceInfo] {
        let reply = try await requestOne(.setSourcePriority(SetSourcePriority(subject: subject, type: type, order: order)))
        guard case .sourcePriority(let result) = reply else { throw Self.unexpected(reply, to: .setSourcePriority) }
        return result.sources
    }

    /// The server's version, uptime and contents.
    public func serverInfo() async throws(HealthClientError) -> ServerInfo {
        let reply = try await requestOne(.serverInfoQuery(ServerInfoQuery()))
        guard case .serverInfo(let info) = reply else { throw Self.unexpected(reply, to: .serverInfoQuery) }
        return info
    }

    /// A round trip to the server.
    public func ping() async throws(HealthClientError) {
        let nonce = UInt64.random(in: 0...UInt64.max)
        let reply = try await requestOne(.ping(Ping(nonce: nonce)))
        guard case .pong(let pong) = reply, pong.nonce == nonce else { throw Self.unexpected(reply, to: .ping) }
    }
}
