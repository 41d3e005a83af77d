import HealthEngine
import HealthModel
import HealthPosix
import HealthStorage
import HealthTLS
import HealthWire

/// Carries out one decoded, validated request against the store and produces its reply messages.
///
/// No sockets and no threads: the server runs it on a worker thread and writes what it returns. Thread-safe
/// (the store is).
public struct RequestDispatcher: Sendable {
    public let store: HealthStore
    /// Changes go through here: logged and durable before they are acknowledged.
    public let durable: DurableStore
    public let limits: SessionLimits
    /// Rows per ``SampleResult`` frame of a streamed sample query.
    public var rowsPerResultFrame = 50_000
    /// Buckets per ``CollectionResult`` frame of a streamed collection query.
    public var bucketsPerResultFrame = 10_000
    /// The identities whose grants every request is checked against; `nil`: no checks (`hkd --auth off`).
    public var identities: IdentityRegistry?
    /// Told about every durable change so live subscriptions update (see RequestDispatcher+Changes.swift).
    public var subscriptions: SubscriptionHub?
    /// Cluster mode: throws unless this node serves the subject (``ErrorCode/notOwner`` naming the node that does);
    /// checked before every request that names one subject (``Message/placedSubject``). `nil`: single-node.
    public var placement: (@Sendable (_ subject: String) throws -> Void)?
    /// Cluster mode: the partitions as this node sees them, for ``ClusterStatus``; `nil`: single-node.
    public var clusterStatus: (@Sendable () throws -> ClusterStatus)?
    /// Cluster mode: what every partition holds (this node's now, the others' as last published), for
    /// ``ServerInfo``'s subjects and samples; `nil`: the store's own.
    public var clusterContents: (@Sendable () throws -> StoreContents)?
    /// Facts about the running server for ``ServerInfo``.
    let status: @Sendable () -> ServerStatus

    /// Server-wide figures the dispatcher cannot know itself.
    public struct ServerStatus: Sendable {
        public var version: String
        public var uptimeMicros: UInt64
        public var connections: UInt64
        public var residentBytes: UInt64

        public init(version: String, uptimeMicros: UInt64, connections: UInt64, residentBytes: UInt64) {
            self.version = version
            self.uptimeMicros = uptimeMicros
            self.connections = connections
            self.residentBytes = residentBytes
        }
    }

    /// A dispatcher over a store without a log (changes are acknowledged once applied).
    public init(store: HealthStore, limits: SessionLimits, status: @escaping @Sendable () -> ServerStatus) {
        self.init(durable: DurableStore(inMemory: store), limits: limits, status: status)
    }

    /// A dispatcher whose changes are logged by `durable`.
    public init(durable: DurableStore, limits: SessionLimits, status: @escaping @Sendable () -> ServerStatus) {
        self.store = durable.store
        self.durable = durable
        self.limits = limits
        self.status = status
    }

    /// The reply to a request: one or more messages, all but the last sent with ``FrameFlags/more``. Failures,
    /// including a request that does not check (``Message/prepared()``) and a message that is no request, come
    /// back as a single ``ErrorReply``.
    public func handle(_ message: Message, identity: ClientIdentity) -> [Message] {
        do {
            guard let request = try message.prepared() else {
                throw HealthError(.invalidArgument, "\(message.kind) is not a request")
            }
            return handle(request, identity: identity)
        } catch {
            return [.error(ErrorReply(Self.healthError(error, of: message)))]
        }
    }

    /// The reply to a request checked at the edge: placed (cluster mode), authorized, served.
    func handle(_ request: PreparedRequest, identity: ClientIdentity) -> [Message] {
        do {
            if let placement, let subject = request.message.placedSubject { try placement(subject) }
            return try request.reply(self, try identities?.access(for: identity))
        } catch {
            return [.error(ErrorReply(Self.healthError(error, of: request.message)))]
        }
    }

    /// `error` as the error reply to `message` names it.
    static func healthError(_ error: any Error, of message: Message) -> HealthError {
        error as? HealthError ?? HealthError(.internalError, "\(message.kind) failed: \(error)")
    }

    /// What the server holds and how it runs, for ``ServerInfo``.
    func serverInfo() throws -> ServerInfo {
        let info: StoreContents
        let local = store.info()
        if let clusterContents {
            info = try clusterContents()
        } else {
            info = StoreContents(subjects: local.subjects, samplesByType: local.samplesByType)
        }
        let status = status()
        let perType = info.samplesByType.filter { $0.value > 0 }.sorted { $0.key < $1.key }
            .map { ServerInfo.TypeCount(type: $0.key, samples: UInt64($0.value)) }
        let blocks = store.blockResidency()
        return ServerInfo(
            serverVersion: status.version, uptimeMicros: status.uptimeMicros, connections: status.connections,
            residentBytes: status.residentBytes, subjects: UInt64(info.subjects), samplesPerType: perType,
            blockBytesInMemory: UInt64(blocks.hotBytes), blockBytesOnDisk: UInt64(blocks.coldBytes),
            memoryParts: local.memory.parts.map { .init(name: $0.name, bytes: UInt64($0.bytes)) })
    }

    /// Backs the store up into `directory` (see ``DurableStore/backup(to:including:)``, which checks the path
    /// first), with the identities so that the tokens work after a restore, and `--tls auto`'s certificate and key
    /// so that its fingerprint stays the same.
    func backup(into directory: String) throws -> BackupResult {
        let report = try durable.backup(
            to: directory,
            including: [
                IdentityRegistry.fileName, AutomaticCertificate.certificateFileName, AutomaticCertificate.keyFileName,
            ])
        return BackupResult(
            generation: report.generation, samples: UInt64(report.samples), files: UInt64(report.files),
            bytes: UInt64(report.bytes))
    }

    /// A collection's buckets as result messages of at most ``bucketsPerResultFrame`` buckets each (at least one,
    /// empty when no bucket has data).
    func collectionFrames(_ buckets: [Statistics], unit: String) -> [Message] {
        var messages: [Message] = []
        var start = 0
        repeat {
            let end = min(buckets.count, start + max(1, bucketsPerResultFrame))
            messages.append(.collectionResult(CollectionResult(unit: unit, buckets: Array(buckets[start..<end]))))
            start = end
        } while start < buckets.count
        return messages
    }

    /// A sample query's rows as result messages of at most ``rowsPerResultFrame`` rows each (at least one), the
    /// last carrying the next page's token when the limit left rows out.
    func resultFrames(_ result: SampleQueryResult, subject: String) -> [Message] {
        var messages: [Message] = []
        var start = 0
        repeat {
            let end = min(result.count, start + rowsPerResultFrame)
            let chunk = result.chunk(start..<end)
            let batch = SampleBatch(
                batchID: 0, subject: subject, typeIdentifier: result.type.identifier, unit: result.unit.symbol,
                sources: chunk.sources, starts: chunk.starts, ends: chunk.ends, values: chunk.values,
                sourceIndices: chunk.sourceIndices, uuids: chunk.uuids, metadata: chunk.metadata)
            let next = end == result.count ? result.next.map(PageToken.init) : nil
            messages.append(.sampleResult(SampleResult(batch: batch, next: next)))
            start = end
        } while start < result.count
        return messages
    }
}
