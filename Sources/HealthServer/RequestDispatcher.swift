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

    /// The reply: one or more messages; all but the last go out with ``FrameFlags/more``.
    /// Failures come back as a single ``ErrorReply``.
    public func handle(_ message: Message, identity: ClientIdentity) -> [Message] {
        do {
            if let placement, let subject = message.placedSubject { try placement(subject) }
            guard let identities else { return try reply(to: message, writer: 0) }
            let access = try identities.access(for: identity)
            return try authorizedReply(to: message, access: access, identities: identities)
        } catch let error as HealthError {
            return [.error(ErrorReply(error))]
        } catch {
            return [.error(ErrorReply(HealthError(.internalError, "\(message.kind) failed: \(error)")))]
        }
    }

    /// The reply to a request already authorized; inserted samples are marked as written by `writer`.
    func reply(to message: Message, writer: UInt32) throws -> [Message] {
        switch message {
        case .insert(let m):
            guard m.batch.count <= Int(clamping: limits.maxBatchRows) else {
                throw HealthError(
                    .batchTooLarge,
                    "batch \(m.batch.batchID) has \(m.batch.count) rows; this server accepts at most \(limits.maxBatchRows)"
                )
            }
            let result = try durable.insert(m.batch, writer: writer, encodedBatch: m.receivedBatchBytes)
            if result.inserted > 0 { subscriptions?.changed(subject: m.batch.subject, type: m.batch.typeIdentifier) }
            return [
                .insertAck(
                    InsertAck(
                        batchID: m.batch.batchID, inserted: UInt64(result.inserted),
                        duplicates: UInt64(result.duplicates)))
            ]

        case .delete(let m):
            let filter: SampleFilter
            switch m.selection {
            case .uuids(let uuids): filter = SampleFilter(uuids: Set(uuids))
            case .filter(let given): filter = given
            }
            let deleted = try durable.delete(subject: m.subject, type: m.type, filter: filter)
            if deleted > 0 { subscriptions?.changed(subject: m.subject, type: m.type) }
            return [.deleteAck(DeleteAck(deleted: UInt64(deleted)))]

        case .sampleQuery(let m):
            let result = try store.samples(
                subject: m.subject, type: m.type, filter: m.filter, sort: m.sort, limit: Int(clamping: m.limit),
                unit: m.unit.isEmpty ? nil : m.unit)
            return resultFrames(result, subject: m.subject)

        case .statisticsQuery(let m):
            let statistics = try store.statistics(
                subject: m.subject, type: m.type, filter: m.filter, options: m.options,
                unit: m.unit.isEmpty ? nil : m.unit)
            let unit = m.unit.isEmpty ? try QuantityType.named(m.type).batchUnit : m.unit
            return [.statisticsResult(StatisticsResult(unit: unit, statistics: statistics))]

        case .collectionQuery(let m):
            let buckets = try store.collection(
                subject: m.subject, type: m.type, filter: m.filter, options: m.options, anchor: m.anchor,
                interval: m.interval, timeZone: m.timeZone, unit: m.unit.isEmpty ? nil : m.unit,
                enumerateFrom: m.enumerateFrom, enumerateTo: m.enumerateTo)
            let unit = m.unit.isEmpty ? try QuantityType.named(m.type).batchUnit : m.unit
            return collectionFrames(buckets, unit: unit)

        case .getSourcePriority(let m):
            let type = try QuantityType.named(m.type)
            return [
                .sourcePriority(
                    SourcePriority(
                        subject: m.subject, type: type.identifier,
                        sources: try store.sourcePriority(subject: m.subject, type: m.type)))
            ]

        case .setSourcePriority(let m):
            let type = try QuantityType.named(m.type)
            let known = try store.sourcePriority(subject: m.subject, type: m.type)
            let order = m.order.map { name in
                known.first { $0.name == name || (!$0.bundleIdentifier.isEmpty && $0.bundleIdentifier == name) }
                    ?? SourceInfo(name: name)
            }
            try durable.setSourcePriority(subject: m.subject, type: m.type, order: order)
            return [
                .sourcePriority(
                    SourcePriority(
                        subject: m.subject, type: type.identifier,
                        sources: try store.sourcePriority(subject: m.subject, type: m.type)))
            ]

        case .authorizationStatusQuery(let m):
            // Authorization is off (`hkd --auth off`): every connection may share every known type.
            return [
                .authorizationStatus(
                    AuthorizationStatus(
                        statuses: try m.types.map { name in
                            .init(type: try QuantityType.named(name).identifier, state: .sharingAuthorized)
                        }))
            ]

        case .clusterStatusQuery:
            return [.clusterStatus(try clusterStatus?() ?? ClusterStatus(node: "", partitions: []))]

        case .serverInfoQuery:
            let info: StoreContents
            if let clusterContents {
                info = try clusterContents()
            } else {
                let local = store.info()
                info = StoreContents(subjects: local.subjects, samplesByType: local.samplesByType)
            }
            let status = status()
            let perType = info.samplesByType.filter { $0.value > 0 }.sorted { $0.key < $1.key }
                .map { ServerInfo.TypeCount(type: $0.key, samples: UInt64($0.value)) }
            let blocks = store.blockResidency()
            return [
                .serverInfo(
                    ServerInfo(
                        serverVersion: status.version, uptimeMicros: status.uptimeMicros,
                        connections: status.connections,
                        residentBytes: status.residentBytes, subjects: UInt64(info.subjects), samplesPerType: perType,
                        blockBytesInMemory: UInt64(blocks.hotBytes), blockBytesOnDisk: UInt64(blocks.coldBytes)))
            ]

        case .adminRequest:
            throw HealthError(.forbidden, "administration needs authorization on (this hkd runs with --auth off)")

        case .changesQuery(let m):
            return try changesReply(m)

        case .backupRequest(let m):
            return [.backupResult(try backup(into: m.directory))]

        case .workoutInsert, .workoutQuery, .workoutDelete:
            return try workoutReply(to: message, writer: writer)

        case .characteristicsSet, .characteristicsQuery, .activitySummaryInsert, .activitySummaryQuery:
            return try profileReply(to: message)
        case .correlationInsert, .correlationQuery, .correlationDelete:
            return try correlationReply(to: message, writer: writer)

        case .routeInsert, .routeQuery:
            return try routeReply(to: message, writer: writer)

        case .ping(let m):
            // The connection answers pings itself; a dispatcher handed one answers the same.
            return [.pong(Pong(nonce: m.nonce))]

        case .subscribe, .unsubscribe:
            // Subscriptions live on a connection: ServerConnection handles them before dispatch.
            throw HealthError(
                .unsupportedRequest, "\(message.kind) needs a connection; a dispatcher alone cannot serve it")

        default:
            // Replies and handshake messages: the connection refuses them before dispatch (`MessageKind.isRequest`).
            throw HealthError(.invalidArgument, "\(message.kind) is not a request")
        }
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

    /// A sample query's rows as result messages of at most ``rowsPerResultFrame`` rows each (at least one).
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
            messages.append(.sampleResult(SampleResult(batch: batch)))
            start = end
        } while start < result.count
        return messages
    }
}
