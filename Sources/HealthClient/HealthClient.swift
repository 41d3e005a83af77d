import Foundation
import HealthCodec
import HealthModel
import HealthWire
import Synchronization

/// The library an ingest agent or a tool embeds to talk to `hkd`.
///
/// Connects lazily and reconnects after a lost connection. Every call retries retryable errors (busy, storage
/// unavailable, connection lost or refused, timeout) within ``ClientConfiguration/retry``'s budget (30 s by
/// default: longer than hkd takes to restart), an insert with the same batch id, so a retried insert is
/// recognised by the server; permanent errors are thrown at once. Thread-safe: share one client between tasks;
/// requests are pipelined on one connection.
///
/// ```swift
/// let client = HealthClient(ClientConfiguration(host: "127.0.0.1", port: 7420, token: token))
/// let ack = try await client.insert(samples)
/// let today = try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum,
///                                         filter: SampleFilter(date: DatePredicate(start: midnight)))
/// print(today?.statistics.figures.sum ?? 0)  // nil: no sample matches
/// ```
public final class HealthClient: Sendable {
    /// Where it connects and how it retries.
    public let configuration: ClientConfiguration
    private let current = Mutex<HealthConnection?>(nil)
    /// Cluster mode: the node that last said it owns a subject (`host:port`), by subject.
    private let routes = Mutex<[String: String]>([:])
    /// Connections to the cluster nodes requests were sent on to, by address.
    private let owners = Mutex<[String: HealthConnection]>([:])
    /// Redirects one request follows before it fails with the last ``ErrorCode/notOwner``.
    static let maxRedirects = 3
    /// Told of each retry before its pause.
    let retryObserver: (@Sendable (RetryEvent) -> Void)?
    /// Set for a client whose requests are answered in the same process (``init(answeredBy:welcome:)``).
    private let inProcess: InProcessServer?

    /// What answers the requests of an in-process client: the server's reply messages to one request, and the
    /// welcome it stands for.
    package struct InProcessServer: Sendable {
        let answer: @Sendable (Message) -> [Message]
        let welcome: Welcome
    }

    /// A client for `configuration`; it connects on its first request (or ``connect()``), not here.
    ///
    /// `onRetry`, if given, is called before each pause of a retry (on the retrying call's thread; keep it short),
    /// e.g. to say that the server is being waited for.
    public init(_ configuration: ClientConfiguration, onRetry: (@Sendable (RetryEvent) -> Void)? = nil) {
        self.configuration = configuration
        self.retryObserver = onRetry
        inProcess = nil
    }

    /// A client whose requests `answer` serves in this process, as hkd's HTTP API runs hkq's queries: no socket,
    /// no handshake, no retries (the server that answers is the one asking). `answer` returns a request's reply
    /// messages; an ``ErrorReply`` among them becomes the call's ``HealthClientError``.
    package init(answeredBy answer: @escaping @Sendable (Message) -> [Message], welcome: Welcome) {
        configuration = ClientConfiguration(host: "", port: 0, clientName: welcome.identity, retry: .none)
        retryObserver = nil
        inProcess = InProcessServer(answer: answer, welcome: welcome)
    }

    /// Connects now (instead of at the first request), surfacing authentication errors early; a server that
    /// cannot be reached is retried for as long as ``ClientConfiguration/retry`` allows.
    @discardableResult
    public func connect() async throws(HealthClientError) -> Welcome {
        if let inProcess { return inProcess.welcome }
        return try await retrying { () async throws(HealthClientError) in try await connection() }.welcome
    }

    /// Runs `attempt` until it succeeds, fails with a permanent error, or the retry budget is spent (then its last
    /// error is thrown), pausing between attempts per ``ClientConfiguration/retry``. A cancelled task stops
    /// retrying.
    func retrying<T>(_ attempt: () async throws(HealthClientError) -> T) async throws(HealthClientError) -> T {
        var schedule = RetrySchedule(configuration.retry)
        while true {
            do {
                return try await attempt()
            } catch {
                guard !Task.isCancelled, let retry = schedule.retry(after: error) else { throw error }
                retryObserver?(retry)
                try? await Task.sleep(for: retry.pause)
            }
        }
    }

    /// ``connect()`` on the calling thread, blocking it for the connect timeout and a round trip per attempt: for a
    /// program whose task runs on a thread of its own (hkq's main thread, a `ThreadExecutor`), where it saves
    /// handing the blocking connect to a dispatch thread. Requests then sent from this thread read their replies
    /// on it too, with no reader thread, until something else needs one (a request from another thread, a
    /// subscription). Never call it from Swift's global executor.
    ///
    /// A server that cannot be reached is retried as by ``connect()``, the pauses blocking the thread.
    package func connectInPlace() throws(HealthClientError) -> Welcome {
        if let inProcess { return inProcess.welcome }
        var schedule = RetrySchedule(configuration.retry)
        while true {
            if let connection = current.withLock({ $0 }), !connection.isClosed { return connection.welcome }
            do {
                return adopt(try HealthConnection.open(configuration, readingInPlace: true)).welcome
            } catch {
                guard let retry = schedule.retry(after: error) else { throw error }
                retryObserver?(retry)
                Thread.sleep(
                    forTimeInterval: Double(retry.pause.components.seconds)
                        + Double(retry.pause.components.attoseconds) / 1e18)
            }
        }
    }

    /// Closes the connection (and those to other cluster nodes); a later request reconnects.
    public func close() {
        let connection = current.withLock { connection in
            defer { connection = nil }
            return connection
        }
        connection?.close()
        let others = owners.withLock { owners in
            defer { owners = [:] }
            return owners.values
        }
        for other in others { other.close() }
    }

    /// The connection to `address` (a cluster node that owns a subject), or the configured one when `nil`.
    func connection(to address: String?) async throws(HealthClientError) -> HealthConnection {
        guard let address, let (host, port) = Self.split(address) else { return try await connection() }
        if address == "\(configuration.host):\(configuration.port)" { return try await connection() }
        if let open = owners.withLock({ $0[address] }), !open.isClosed { return open }
        var target = configuration
        (target.host, target.port) = (host, port)
        let fresh = try await Self.open(target)
        return owners.withLock { owners in
            if let existing = owners[address], !existing.isClosed {
                fresh.close()
                return existing
            }
            owners[address] = fresh
            return fresh
        }
    }

    /// The address a ``ErrorCode/notOwner`` message starts with (up to its first space), if it is `HOST:PORT`.
    static func ownerAddress(in message: String) -> String? {
        let address = String(message.prefix { $0 != " " })
        return split(address) == nil ? nil : address
    }

    /// `HOST:PORT` (`[IPv6]:PORT`) split; `nil` for anything else.
    static func split(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// Opens a connection off the cooperative pool (connecting blocks).
    private static func open(_ configuration: ClientConfiguration) async throws(HealthClientError) -> HealthConnection {
        let result: Result<HealthConnection, HealthClientError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    returning: Result { () throws(HealthClientError) in try HealthConnection.open(configuration) })
            }
        }
        return try result.get()
    }

    /// The open connection, or a new one (package-internal: the wire-level connection is not public API).
    package func connection() async throws(HealthClientError) -> HealthConnection {
        if let connection = current.withLock({ $0 }), !connection.isClosed { return connection }
        return adopt(try await Self.open(configuration))
    }

    /// Makes `fresh` the open connection, unless another task opened one meanwhile (then `fresh` is closed and
    /// that one returned).
    private func adopt(_ fresh: HealthConnection) -> HealthConnection {
        current.withLock { connection in
            if let existing = connection, !existing.isClosed {
                fresh.close()
                return existing
            }
            connection = fresh
            return fresh
        }
    }

    /// Sends a request, reconnecting and retrying retryable failures per the retry policy. A cluster node's
    /// ``ErrorCode/notOwner`` sends the request to the owner it names at once; the client remembers the owner of
    /// the subject for its next requests (and forgets it when that node cannot be reached).
    package func request(_ message: Message) async throws(HealthClientError) -> [Message] {
        if let inProcess {
            let replies = inProcess.answer(message)
            if replies.count == 1, case .error(let reply) = replies[0] {
                throw HealthClientError(.server, reply.healthError)
            }
            return replies
        }
        var redirects = 0
        let subject = message.placedSubject
        return try await retrying { () async throws(HealthClientError) in
            while true {
                let owner = knownOwner(of: subject)
                do throws(HealthClientError) {
                    return try await connection(to: owner).request(message)
                } catch {
                    guard learnRoute(subject, from: error, routed: owner != nil), redirects < Self.maxRedirects else {
                        throw error
                    }
                    redirects += 1
                }
            }
        }
    }

    /// The address of the node last known to own `subject`'s partition (cluster mode); `nil`: ask the configured
    /// node.
    func knownOwner(of subject: String?) -> String? {
        subject.flatMap { subject in routes.withLock { $0[subject] } }
    }

    /// What `error`, met on a request about `subject`, says about where it lives: a ``ErrorCode/notOwner``
    /// names the owner, remembered, and the request should go there now (true); a lost or refused connection to
    /// the remembered owner (`routed`) forgets it, so the next try asks the configured node again.
    func learnRoute(_ subject: String?, from error: HealthClientError, routed: Bool) -> Bool {
        guard let subject else { return false }
        if error.code == .notOwner, let address = Self.ownerAddress(in: error.message) {
            routes.withLock { $0[subject] = address }
            return true
        }
        if routed, error.code == .connectionLost || error.code == .timedOut {
            routes.withLock { $0[subject] = nil }
        }
        return false
    }

    /// Sends a request answered by one frame and returns the reply, typed by the request (retried like
    /// ``request(_:)``). Streamed requests go through ``sendStreamed(_:)``.
    ///
    /// ```swift
    /// let info = try await client.send(ServerInfoQuery())   // ServerInfo
    /// ```
    package func send<R: Request>(_ request: R) async throws(HealthClientError) -> R.Reply {
        try R.reply(in: await self.request(Message(request)))
    }

    /// Sends a request whose answer may span several frames and returns every reply frame, in order.
    package func sendStreamed<R: StreamedRequest>(_ request: R) async throws(HealthClientError) -> [R.Reply] {
        try R.replies(in: await self.request(Message(request)))
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
        return try await send(Insert(batch: batch))
    }

    /// Stores samples, grouped into batches by subject, type and unit (at most `maxBatchRows` rows each,
    /// default the server's announced limit, learnt by connecting, which is retried like every request). Returns
    /// one acknowledgement per batch.
    public func insert(_ samples: [Sample], maxBatchRows: Int? = nil) async throws(HealthClientError) -> [InsertAck] {
        var limit = maxBatchRows ?? 0
        if limit <= 0 { limit = Int(clamping: try await connect().limits.maxBatchRows) }
        var acks: [InsertAck] = []
        for batch in SampleBatch.grouping(samples, maxRows: limit, makeBatchID: Self.makeBatchID) {
            acks.append(try await insert(batch))
        }
        return acks
    }

    /// Deletes samples by UUID or by filter; returns how many were deleted.
    public func delete(_ type: String, subject: String, _ selection: DeleteSelection) async throws(HealthClientError)
        -> UInt64
    {
        try await send(Delete(subject: subject, type: type, selection: selection)).deleted
    }

    // MARK: Queries

    /// HKSampleQuery: matching samples as columnar batches, in the requested order (values in `unit`, or canonical).
    public func sampleBatches(
        _ type: String, subject: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending,
        limit: Int = 0,
        unit: String = ""
    ) async throws(HealthClientError) -> [SampleBatch] {
        let query = SampleQuery(
            subject: subject, type: type, filter: filter, sort: sort, limit: UInt64(max(0, limit)), unit: unit)
        return try await sendStreamed(query).map(\.batch)
    }

    /// HKSampleQuery: matching samples, in the requested order (at most `limit`, 0: all; the pages after them:
    /// ``samplePage(_:subject:filter:sort:limit:after:unit:)``).
    public func samples(
        _ type: String, subject: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending,
        limit: Int = 0,
        unit: String = ""
    ) async throws(HealthClientError) -> [Sample] {
        try await samplePage(type, subject: subject, filter: filter, sort: sort, limit: limit, unit: unit).samples
    }

    /// HKStatisticsQuery: the figures of the samples that match, or `nil` when none does (as HealthKit's
    /// `HKStatisticsQueryDescriptor` answers: no data is neither an error nor a value of zero). A type the
    /// subject has no samples of at all is no data too; an unknown type, a bad unit or an option the type does
    /// not take is thrown.
    public func statistics(
        _ type: String, subject: String, options: StatisticsOptions, filter: SampleFilter = .all, unit: String = ""
    ) async throws(HealthClientError) -> StatisticsResult? {
        do {
            return try await send(
                StatisticsQuery(subject: subject, type: type, filter: filter, options: options, unit: unit))
        } catch  where error.code == .noData {
            return nil
        }
    }

    /// HKStatisticsCollectionQuery: statistics per calendar bucket.
    public func collection(_ query: CollectionQuery) async throws(HealthClientError) -> CollectionResult {
        let parts = try await sendStreamed(query)
        // One part (most answers) is taken as it is: concatenating copies every bucket.
        let buckets = parts.count == 1 ? parts[0].buckets : parts.flatMap(\.buckets)
        return CollectionResult(unit: parts.last?.unit ?? "", buckets: buckets)
    }

    /// The sources of a type for a subject, highest priority first.
    public func sourcePriority(_ type: String, subject: String) async throws(HealthClientError) -> [SourceInfo] {
        try await send(GetSourcePriority(subject: subject, type: type)).sources
    }

    /// Puts the named sources first, in this order; returns the resulting order.
    public func setSourcePriority(_ type: String, subject: String, order: [String]) async throws(HealthClientError)
        -> [SourceInfo]
    {
        try await send(SetSourcePriority(subject: subject, type: type, order: order)).sources
    }

    /// The server's version, uptime and contents.
    public func serverInfo() async throws(HealthClientError) -> ServerInfo {
        try await send(ServerInfoQuery())
    }

    /// Cluster mode: the partitions as the node asked sees them (owners, stream sequences, lag); admins only.
    /// A single-node server answers with no partitions.
    package func clusterStatus() async throws(HealthClientError) -> ClusterStatus {
        try await send(ClusterStatusQuery())
    }

    /// A round trip to the server.
    public func ping() async throws(HealthClientError) {
        let nonce = UInt64.random(in: 0...UInt64.max)
        let pong = try await send(Ping(nonce: nonce))
        guard pong.nonce == nonce else {
            throw .local(.malformedPayload, "the server answered ping \(nonce) with pong \(pong.nonce)")
        }
    }
}
