import Foundation
import HealthCluster
import HealthEngine
import HealthModel
import HealthPosix
import HealthStorage
import HealthTLS
import HealthWire
import Synchronization

/// The running server: event loops accepting connections, a worker pool running requests, the store.
///
/// `start` binds and returns at once; `stop` closes every connection and joins the threads. Thread-safe.
public final class HealthServer: Sendable {
    /// The server software version announced in the welcome.
    public static let version = "hkd \(ProjectVersion.current)"

    public let configuration: ServerConfiguration
    public let store: HealthStore
    /// The store with its write-ahead log and snapshots (or, in cluster mode, its partition streams).
    public let durable: DurableStore
    /// Moves sealed blocks out of memory beyond `--memory-limit`; `nil` without it.
    let coldBlocks: ColdBlocks?
    /// This node of a cluster (`--cluster`); `nil` in single-node mode.
    public let cluster: ClusterNode?
    let workers: WorkerPool
    /// Live subscriptions of every connection; changes wake the ones they touch.
    public let subscriptions = SubscriptionHub()
    /// The HTTP API's streamed bodies (at most `--http-max-streams`) and event streams, ended cleanly by ``stop()``.
    let httpStreams: HTTPStreams
    private let group: EventLoopGroup
    private let listener: Mutex<TCPServer?>
    private let startedAt = ContinuousClock.now
    private let nextConnectionID = Atomic<UInt64>(1)
    private let dataLock: DirectoryLock
    /// The listener's TLS context; nil for plaintext.
    let tls: TLSContext?
    /// Whether the listener speaks TLS.
    public var usesTLS: Bool { tls != nil }

    /// The client identities; `nil` with `--auth off`.
    public let identities: IdentityRegistry?
    /// Reloads shared identities (cluster mode) every second, so changes made on other nodes apply here.
    private let identityRefresher: PeriodicThread?
    /// Slows down repeated authentication failures per address.
    let failures = FailureThrottle()
    /// Connections that have not completed their handshake (see ``ServerConfiguration/maxHandshakingConnections``).
    let handshakes: HandshakeQuota
    /// Request bytes held in memory by all connections (see ``ServerConfiguration/maxBufferedBytes``).
    let budget: MemoryBudget
    /// Counters and latencies for `/metrics`.
    let metrics = ServerMetrics()
    /// The operator endpoint (`--metrics-listen`), started before the data was opened.
    private let metricsEndpoint: MetricsEndpoint?

    /// The port of the metrics endpoint (`--metrics-listen`), when it runs.
    public var metricsPort: Int? { metricsEndpoint?.port }

    /// Connections open, accepted and refused by the main listener.
    var listenerStatistics: (open: Int, accepted: Int, refused: Int) {
        listener.withLock { tcp in (tcp?.connectionCount ?? 0, tcp?.acceptedCount ?? 0, tcp?.refusedCount ?? 0) }
    }

    /// Decides who a connection's client is: the token challenge-response against ``identities``, or with
    /// `--auth off` the anonymous identity (id 0) for everyone.
    let authenticator: any HandshakeAuthenticator

    /// The port the server listens on (the real one when port 0 was asked for).
    public var port: Int { listener.withLock { $0?.port ?? 0 } }

    /// Reserves the port and starts the metrics endpoint, then creates and checks the data directory, locks it,
    /// recovers the data, and listens once it can answer. A port that cannot be bound fails before anything is
    /// written to disk; until hkd listens its port refuses connections and `/readyz` says "starting", so that a
    /// port check or a readiness probe never reports a server whose requests would fail. In cluster mode it waits
    /// for JetStream first (``JetStreamStartup``), pausing with `pause` between attempts, which returns `false` to
    /// stop waiting (start then throws ``ErrorCode/shuttingDown``).
    ///
    /// `http` answers the HTTP/JSON API's requests when `--http-listen` asks for it.
    public static func start(
        _ configuration: ServerConfiguration, http: (any HTTPService)? = nil,
        pause: @escaping @Sendable (Duration) -> Bool = JetStreamStartup.sleep
    ) throws -> HealthServer {
        try configuration.checkLimits()
        if let address = configuration.httpListen, !ServerConfiguration.isLoopback(address.host),
            try configuration.transportSecurity() == .plaintext
        {
            throw HealthError(
                .invalidArgument,
                "--http-listen \(address.host):\(address.port) is beyond loopback: serve it with --tls, since "
                    + "Bearer tokens cross the wire")
        }
        let security = try configuration.transportSecurity()
        let socket: ListeningSocket
        do {
            socket = try ListeningSocket.reserve(host: configuration.host, port: configuration.port)
        } catch {
            throw HealthError(
                .invalidArgument, "cannot listen on \(configuration.host):\(configuration.port): \(error.message)")
        }
        // The HTTP API's port too, which in cluster mode the node announces before it listens.
        let httpSocket: ListeningSocket?
        do {
            httpSocket =
                try http == nil
                ? nil
                : configuration.httpListen.map { address throws(SystemError) in
                    try ListeningSocket.reserve(host: address.host, port: address.port)
                }
        } catch {
            let address = configuration.httpListen.map { "\($0.host):\($0.port)" } ?? ""
            throw HealthError(.invalidArgument, "cannot serve HTTP on \(address): \(error.message)")
        }
        let metrics = try configuration.metricsListen.map { try startMetrics($0) }
        var started = false
        defer { if !started { metrics?.stop() } }
        if let backup = configuration.restoreFrom { try restore(backup, into: configuration.dataDirectory) }
        do {
            try FileSystem.makeDirectories(configuration.dataDirectory, permissions: 0o700)
        } catch {
            throw HealthError(
                .storageUnavailable, "cannot create the data directory \(configuration.dataDirectory): \(error.message)"
            )
        }
        try DataDirectorySafety.check(configuration.dataDirectory)
        let lock: DirectoryLock
        do {
            lock = try DirectoryLock(directory: configuration.dataDirectory)
        } catch {
            throw HealthError(
                .storageUnavailable, "cannot lock the data directory \(configuration.dataDirectory): \(error.message)")
        }
        let tls: TLSContext?
        do {
            tls = try makeTLSContext(security, configuration, pause: pause)
        } catch {
            lock.release()
            throw error
        }
        // Cluster mode: the node first, whose settings bucket holds the identities too.
        let cluster: ClusterNode?
        do {
            for name in try FileSystem.removeAtomicWriteLeftovers(in: configuration.dataDirectory) {
                ServerLog.info("removed \(configuration.dataDirectory)/\(name), left by a write that did not finish")
            }
            cluster = try configuration.clusterOptions().map { options in
                let node = try ClusterNode(
                    options, address: Self.address(configuration.host, socket.address.port),
                    httpAddress: httpSocket.flatMap { reserved in
                        configuration.httpListen.map { Self.address($0.host, reserved.address.port) }
                    },
                    startup: JetStreamStartup(urls: options.urls, pause: pause) { ServerLog.info($0) })
                if let warning = node.replicas.warning { ServerLog.warning(warning) }
                return node
            }
        } catch let error as SystemError {
            lock.release()
            throw HealthError(
                .storageUnavailable, "cannot read the data directory \(configuration.dataDirectory): \(error)")
        } catch {
            lock.release()
            throw error
        }
        let identities: IdentityRegistry?
        let durable: DurableStore
        // Restoring reads whole snapshot files and decodes them into buffers it frees: those get mappings of their
        // own, so freeing them gives their pages back instead of leaving free, resident space in the allocator's
        // heaps (glibc raises its threshold after the first such free).
        Heap.mapAllocations(atLeast: 1 << 20)
        do {
            identities = configuration.auth == .required ? try openIdentities(configuration, cluster: cluster) : nil
            durable = try cluster?.durable ?? DurableStore(configuration.storage) { line in ServerLog.info(line) }
        } catch {
            cluster?.stop()
            lock.release()
            guard let error = error as? SystemError else { throw error }
            throw HealthError(
                .storageUnavailable, "cannot read the data directory \(configuration.dataDirectory): \(error)")
        }
        if identities == nil {
            ServerLog.warning("authorization is off: anyone who reaches the port may read and change all data")
        }
        let report = durable.recovery
        // Restoring decodes more than it keeps (a metadata row per sample, interned into a few): give the freed
        // pages back rather than hold them for the process's life. Afterwards, allocations below 32 MiB come from
        // the heaps again, as glibc's rising threshold would have them: mapping each large buffer of ingest
        // costs about 5 % of its speed.
        Heap.trim()
        Heap.mapAllocations(atLeast: 32 << 20)
        if cluster == nil {
            ServerLog.info(
                "recovered \(report.snapshotSamples) samples from snapshots and replayed \(report.replayedRecords) log records"
            )
        }
        let server: HealthServer
        do {
            server = try HealthServer(
                configuration: configuration, durable: durable, cluster: cluster, identities: identities,
                dataLock: lock, tls: tls, metricsEndpoint: metrics)
        } catch {
            cluster?.stop()
            durable.close(snapshot: false)
            lock.release()
            throw error
        }
        do {
            try server.listen(on: socket)
        } catch {
            server.stop()
            throw HealthError(
                .invalidArgument, "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        if let http, let address = configuration.httpListen, let httpSocket {
            do {
                try server.listenHTTP(on: httpSocket, address: address, service: http)
            } catch {
                server.stop()
                throw HealthError(.invalidArgument, "cannot serve HTTP on \(address.host):\(address.port): \(error)")
            }
        }
        metrics?.serve(server)
        started = true
        if !ServerConfiguration.isLoopback(configuration.host) {
            ServerLog.warning(
                "listening on \(configuration.host), not a loopback address: anyone who can reach port \(server.port) can "
                    + "connect"
                    + (tls == nil
                        ? ", and --allow-plaintext sends tokens' proofs and data in clear; firewall the port or tunnel it"
                        : "; TLS protects the traffic, tokens decide who may do what")
                    + " (SECURITY.md)")
        }
        return server
    }

    /// The identities: the data directory's, or in cluster mode the cluster's (a node's own `identities.json`
    /// becomes the cluster's when the cluster has none yet).
    private static func openIdentities(_ configuration: ServerConfiguration, cluster: ClusterNode?) throws
        -> IdentityRegistry
    {
        let directory = configuration.dataDirectory
        let local = IdentityFileStorage(path: directory + "/" + IdentityRegistry.fileName)
        return try IdentityRegistry.open(
            cluster.map { ClusterIdentityStorage(bucket: $0.settings) } ?? local, seed: cluster == nil ? nil : local,
            directory: directory, resetAdmin: configuration.resetAdmin,
            existingData: try StoredData.evidence(in: directory)
        ) { ServerLog.info($0) }
    }

    /// `--tls auto` in cluster mode: the certificate every node serves, kept in the cluster's settings
    /// (``ClusterSetup/certificateKey``) and made by the first node that needs it, so that a client pinning one
    /// node's certificate can follow redirects to the others. Copied into the data directory.
    private static func clusterCertificate(
        _ options: ClusterOptions, _ configuration: ServerConfiguration, pause: @escaping @Sendable (Duration) -> Bool
    ) throws -> AutomaticCertificate {
        let shared = try ClusterSetup.sharedSetting(
            ClusterSetup.certificateKey,
            startup: JetStreamStartup(urls: options.urls, pause: pause) { ServerLog.info($0) },
            requested: options.replicas
        ) {
            AutomaticCertificate.combinedPEM(
                try AutomaticCertificate.generate(
                    hostName: ProcessInfo.processInfo.hostName, listenHost: configuration.host))
        }
        return try AutomaticCertificate.install(
            combinedPEM: shared.value, in: configuration.dataDirectory, created: shared.created)
    }

    /// The TLS context for the listener's security (nil for plaintext), logging the certificate's fingerprint;
    /// `--tls auto` makes the data directory's certificate on the first start.
    private static func makeTLSContext(
        _ security: ServerConfiguration.TransportSecurity, _ configuration: ServerConfiguration,
        pause: @escaping @Sendable (Duration) -> Bool
    ) throws -> TLSContext? {
        let certificate: String
        let key: String
        switch security {
        case .plaintext:
            return nil
        case .automaticCertificate:
            let automatic: AutomaticCertificate
            let cluster = try configuration.clusterOptions()
            do {
                automatic =
                    try cluster.map { try clusterCertificate($0, configuration, pause: pause) }
                    ?? AutomaticCertificate.ensure(
                        in: configuration.dataDirectory, hostName: ProcessInfo.processInfo.hostName,
                        listenHost: configuration.host)
            } catch let error as HealthError {
                throw error
            } catch {
                throw HealthError(.storageUnavailable, "cannot make or read the TLS certificate: \(error)")
            }
            (certificate, key) = (automatic.certificateFile, automatic.keyFile)
            let whose = cluster == nil ? "the self-signed TLS certificate" : "the cluster's self-signed TLS certificate"
            ServerLog.info(
                "\(automatic.created ? "created" : "using") \(whose) \(certificate)"
                    + (cluster == nil ? "" : " (every node serves it: a client pinning it follows redirects)")
                    + "; SHA-256 fingerprint \(automatic.fingerprint)")
        case .certificate(let file, let keyFile):
            (certificate, key) = (file, keyFile)
        }
        do {
            let context = try TLSContext.server(
                certificateFile: certificate, keyFile: key, clientCAFile: configuration.tlsClientCA)
            if case .certificate = security {
                let fingerprint = try CertificateFingerprint.ofCertificateFile(certificate)
                ServerLog.info("TLS certificate \(certificate); SHA-256 fingerprint \(fingerprint)")
            }
            if let clientCA = configuration.tlsClientCA {
                ServerLog.info("mutual TLS: clients need a certificate signed by an authority of \(clientCA)")
            }
            return context
        } catch {
            throw HealthError(.invalidArgument, "cannot set up TLS: \(error)")
        }
    }

    private init(
        configuration: ServerConfiguration, durable: DurableStore, cluster: ClusterNode?,
        identities: IdentityRegistry?, dataLock: DirectoryLock, tls: TLSContext?, metricsEndpoint: MetricsEndpoint?
    ) throws {
        self.configuration = configuration
        httpStreams = HTTPStreams(limit: configuration.httpMaxStreams)
        self.metricsEndpoint = metricsEndpoint
        self.cluster = cluster
        self.tls = tls
        self.identities = identities
        identityRefresher =
            identities?.isShared == true
            ? try PeriodicThread(name: "hkd-identities", every: .seconds(1)) {
                do {
                    try identities?.refresh()
                } catch {
                    ServerLog.debug("cannot reload the shared identities: \(error)")
                }
            } : nil
        authenticator = identities.map { TokenAuthenticator(registry: $0) } ?? OpenAuthenticator()
        self.dataLock = dataLock
        let cores = PosixThread.processorCount
        self.durable = durable
        store = durable.store
        if let limit = configuration.memoryLimit {
            coldBlocks = try ColdBlocks(
                directory: configuration.dataDirectory + "/cold", limit: limit, store: durable.store
            ) { line in ServerLog.info(line) }
        } else {
            coldBlocks = nil
        }
        if let cluster {
            // A partition this node stops serving: its subscriptions end (their next update finds it elsewhere).
            let subscriptions = subscriptions
            let layout = cluster.log.layout
            cluster.leases.onLeaving { index in subscriptions.wake { layout.partition(of: $0) == index } }
        }
        store.deletionRetention = Int64(clamping: configuration.deletedRetentionSeconds) * 1_000_000
        group = try EventLoopGroup(threads: configuration.threads > 0 ? configuration.threads : cores, name: "hkd-loop")
        workers = try WorkerPool(
            threads: configuration.workers > 0 ? configuration.workers : cores, queueCapacity: 4096, name: "hkd-worker")
        listener = Mutex(nil)
        budget = MemoryBudget(capacity: configuration.maxBufferedBytes)
        handshakes = HandshakeQuota(limit: configuration.handshakingLimit)
        try coldBlocks?.start()
    }

    /// Carries out requests against the store; made per request (it is a small value).
    var dispatcher: RequestDispatcher {
        var dispatcher = RequestDispatcher(durable: durable, limits: configuration.sessionLimits) { [self] in status() }
        dispatcher.identities = identities
        dispatcher.subscriptions = subscriptions
        if let cluster {
            dispatcher.placement = { try cluster.checkServes($0) }
            dispatcher.clusterStatus = { try ClusterStatus(cluster) }
            dispatcher.clusterContents = { try cluster.clusterContents() }
        }
        return dispatcher
    }

    private func status() -> RequestDispatcher.ServerStatus {
        let uptime = ContinuousClock.now - startedAt
        return RequestDispatcher.ServerStatus(
            version: HealthServer.version,
            uptimeMicros: UInt64(uptime.components.seconds) * 1_000_000
                + UInt64(uptime.components.attoseconds / 1_000_000_000_000),
            connections: UInt64(connectionCount), residentBytes: HealthServer.residentBytes())
    }

    private func listen(on socket: ListeningSocket) throws {
        let refusal = Self.refusalFrame(
            HealthError(
                .tooManyConnections, "the server has reached its limit of \(configuration.maxConnections) connections"))
        let tcp = try TCPServer.start(
            group: group, listener: socket,
            configuration: TCPServerConfiguration(
                host: configuration.host, port: configuration.port, maxConnections: configuration.maxConnections,
                refusalMessage: refusal,
                waterMarks: WaterMarks(
                    low: configuration.maxQueuedReplyBytes / 4, high: configuration.maxQueuedReplyBytes))
        ) { [self] connection in
            let id = nextConnectionID.add(1, ordering: .relaxed).oldValue
            if let tls {
                do {
                    connection.install(
                        try TLSServerLayer(context: tls, plaintextRefusal: Self.plaintextOnTLSRefusal) { version in
                            ServerLog.debug("connection \(id) from \(connection.remoteAddress): \(version) established")
                        })
                } catch {
                    ServerLog.warning("connection \(id) from \(connection.remoteAddress): \(error)")
                    connection.close()
                }
            }
            return ServerConnection(server: self, id: id, peer: connection.remoteAddress.host, loop: connection.loop)
        }
        listener.withLock { $0 = tcp }
    }

    /// What a plaintext client on the TLS port reads (in plaintext) before the connection closes.
    static let plaintextOnTLSRefusal = refusalFrame(
        HealthError(
            .tlsRequired, "this server speaks TLS: connect with TLS (hkq --tls, with --tls-fingerprint or --tls-ca)"))

    /// What a TLS client on the plaintext port reads (in plaintext) before the connection closes.
    static let tlsOnPlaintextRefusal = refusalFrame(
        HealthError(.tlsUnavailable, "this server does not speak TLS on this port: connect without TLS"))

    /// An error frame for a connection-level refusal.
    static func refusalFrame(_ error: HealthError) -> [UInt8] {
        FrameEncoder().encode(Message.error(ErrorReply(error)).frame(requestID: 0))
    }

    /// Copies a backup's files (snapshots, manifest, log segments, durable mark, identities, `backup.json`) into
    /// an empty data directory, once they match the backup's `backup.json` (``BackupCheck``); a backup without one
    /// is restored with a warning.
    static func restore(_ backup: String, into directory: String) throws {
        do {
            guard try FileSystem.isDirectory(backup),
                try FileSystem.exists(backup + "/snapshots/MANIFEST")
            else {
                throw HealthError(.invalidArgument, "\(backup) is not a backup (no snapshots/MANIFEST in it)")
            }
            if try FileSystem.exists(directory), !(try FileSystem.contentsOfDirectory(directory)).isEmpty {
                throw HealthError(
                    .invalidArgument, "cannot restore into \(directory): it is not empty (restore into a new directory)"
                )
            }
            // Checked before anything is copied (and the copy again at start-up, as any backup directory is).
            if let manifest = try BackupCheck.verify(backup) {
                ServerLog.info(
                    "checked the backup \(backup): \(manifest.files.count) files as written, \(manifest.samples) samples "
                        + "in its snapshot, the log through sequence \(manifest.lastSequence)")
            } else {
                ServerLog.warning(
                    "\(backup) has no \(BackupManifest.fileName) (a backup of a release before it, or one that did not "
                        + "finish): its files cannot be checked against what the backup wrote")
            }
            for folder in ["", "/snapshots", "/wal"] {
                try FileSystem.makeDirectories(directory + folder, permissions: 0o700)
                for name in try FileSystem.contentsOfDirectory(backup + folder)
                where !(try FileSystem.isDirectory(backup + folder + "/" + name)) {
                    try FileSystem.copyFile(backup + folder + "/" + name, to: directory + folder + "/" + name)
                }
                try FileSystem.syncDirectory(directory + folder)
            }
            ServerLog.info("restored the backup \(backup) into \(directory)")
        } catch let error as HealthError {
            throw error
        } catch {
            throw HealthError(.storageUnavailable, "cannot restore \(backup) into \(directory): \(error)")
        }
    }

    /// The metrics endpoint at `address`, answering "starting" until ``MetricsEndpoint/serve(_:)``.
    private static func startMetrics(_ address: ServerConfiguration.ListenAddress) throws -> MetricsEndpoint {
        let endpoint: MetricsEndpoint
        do {
            endpoint = try MetricsEndpoint(host: address.host, port: address.port)
        } catch {
            throw HealthError(.invalidArgument, "cannot serve metrics on \(address.host):\(address.port): \(error)")
        }
        ServerLog.info("metrics on \(address.host):\(endpoint.port) (/metrics, /healthz, /readyz)")
        return endpoint
    }

    /// The HTTP API's listener (`--http-listen`), once it listens.
    private let httpListener = Mutex<TCPServer?>(nil)

    /// The port of the HTTP API (`--http-listen`), when it runs.
    public var httpPort: Int? { httpListener.withLock { $0?.port } }

    /// Serves `service` on `address`, with the main listener's TLS.
    /// `host:port`, an IPv6 host in brackets.
    static func address(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private func listenHTTP(
        on socket: ListeningSocket, address: ServerConfiguration.ListenAddress, service: any HTTPService
    ) throws {
        let limits = HTTPLimits()
        let refusal = HTTPProblem(HealthError(.tooManyConnections, "the HTTP listener is at its limit of connections"))
        let tcp = try TCPServer.start(
            group: group, listener: socket,
            configuration: TCPServerConfiguration(
                host: address.host, port: address.port, maxConnections: configuration.maxConnections,
                refusalMessage: refusal.response.serialized(keepAlive: false))
        ) { [self] connection in
            if let tls {
                do {
                    connection.install(try TLSServerLayer(context: tls, plaintextRefusal: Self.plaintextOnHTTPS))
                } catch {
                    ServerLog.warning("HTTP connection from \(connection.remoteAddress): \(error)")
                    connection.close()
                }
            }
            return HTTPConnectionHandler(server: self, service: service, limits: limits, loop: connection.loop)
        }
        httpListener.withLock { $0 = tcp }
        ServerLog.info("HTTP API on \(address.host):\(tcp.port) (\(tls == nil ? "http" : "https")://…/v1)")
    }

    /// What a plaintext client of the HTTPS listener reads before the connection closes.
    static let plaintextOnHTTPS = HTTPProblem(
        status: 400, title: "Bad Request", detail: "this listener speaks HTTPS: connect with https://"
    ).response.serialized(keepAlive: false)

    /// Connections open now.
    public var connectionCount: Int { listener.withLock { $0?.connectionCount ?? 0 } }

    /// How long ``stop()`` waits for the HTTP API's streamed bodies to end before it closes their connections.
    static let streamDrainTime: Duration = .seconds(2)

    /// Stops accepting, ends event streams, closes connections, finishes queued work and joins every thread.
    /// Idempotent.
    public func stop() {
        let tcp = listener.withLock { listener in
            defer { listener = nil }
            return listener
        }
        tcp?.stop()
        // Event streams say why they end and end their bodies; other streamed bodies get a moment to finish.
        httpStreams.drain(within: Self.streamDrainTime)
        httpListener.withLock { listener in
            defer { listener = nil }
            return listener
        }?.stop()
        metricsEndpoint?.stop()
        workers.shutdown()
        group.shutdown()
        identityRefresher?.stop()
        coldBlocks?.stop()
        cluster?.stop()
        durable.close()
        dataLock.release()
    }

    /// Resident memory of this process, from /proc/self/statm (0 where unavailable).
    static func residentBytes() -> UInt64 {
        guard let bytes = try? FileSystem.readFile("/proc/self/statm", maxBytes: 4096),
            let text = String(validating: bytes, as: UTF8.self)
        else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
