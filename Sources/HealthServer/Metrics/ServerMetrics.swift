import HealthModel
import HealthPosix
import HealthWire

/// What hkd counts while it serves, for `/metrics`: requests and their latency by message kind, errors by code,
/// ingested samples and batches by type, authentication failures. Gauges (connections, memory, stored samples,
/// the log's fsyncs, snapshots) are read when the page is rendered (``MetricsPage``). Thread-safe, lock-free.
///
/// Labels are message kinds, error code names and quantity types only: never subjects, identities or tokens.
final class ServerMetrics: Sendable {
    /// Requests handled, by kind (the kinds a client may send).
    let requests: [MessageKind: Counter]
    /// Time on a worker from dispatch to reply, by kind.
    let requestDurations: [MessageKind: Histogram]
    /// Error replies sent, by code.
    let errors: [ErrorCode: Counter]
    /// Samples stored by inserts (duplicates excluded), by quantity type index.
    let ingestedSamples: [Counter]
    /// Insert batches acknowledged, by quantity type index.
    let ingestedBatches: [Counter]
    /// Refused hellos and proofs.
    let authenticationFailures = Counter()

    init() {
        let kinds = MessageKind.allCases.filter(\.isRequest)
        requests = Dictionary(uniqueKeysWithValues: kinds.map { ($0, Counter()) })
        requestDurations = Dictionary(
            uniqueKeysWithValues: kinds.map { ($0, Histogram(bounds: Histogram.latencyBounds)) })
        errors = Dictionary(uniqueKeysWithValues: ErrorCode.allCases.map { ($0, Counter()) })
        ingestedSamples = QuantityType.all.map { _ in Counter() }
        ingestedBatches = QuantityType.all.map { _ in Counter() }
    }

    /// Records one handled request: its kind, how long it took since `started`, and what it answered.
    func record(_ request: Message, replies: [Message], since started: Deadline) {
        requests[request.kind]?.add()
        requestDurations[request.kind]?.observeSince(started)
        for case .error(let reply) in replies {
            if let code = ErrorCode(rawValue: reply.code) { errors[code]?.add() }
        }
        if case .insert(let insert) = request, case .insertAck(let ack)? = replies.first,
            let type = try? QuantityType.named(insert.batch.typeIdentifier)
        {
            ingestedSamples[type.index].add(ack.inserted)
            ingestedBatches[type.index].add()
        }
    }

    /// Records an error sent without a dispatched request (malformed frames, refused handshakes, deadlines).
    func recordError(_ code: ErrorCode) { errors[code]?.add() }
}
