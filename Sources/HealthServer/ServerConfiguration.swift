import Glibc
import HealthCluster
import HealthModel
import HealthPosix
import HealthStorage
import HealthWire

/// Everything `hkd` can be told on its command line, with the embedded defaults.
public struct ServerConfiguration: Hashable, Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (tests); the bound port is logged and available from the running server.
    public var port = 7420
    public var dataDirectory = "./hkd-data"
    /// Event-loop threads; 0 means one per core.
    public var threads = 0
    /// Worker threads for heavy requests; 0 means one per core.
    public var workers = 0
    public var maxConnections = 1024
    /// Connections in their handshake at once before the one lingering longest (over a second) is closed to make
    /// room, so that clients which never authenticate cannot take every slot; new connections are never refused.
    /// `nil`: 256, or half of ``maxConnections`` when that is less (see ``handshakingLimit``).
    public var maxHandshakingConnections: Int?

    /// The handshake quota in force: ``maxHandshakingConnections``, else its default.
    public var handshakingLimit: Int { maxHandshakingConnections ?? min(256, maxConnections / 2) }

    /// Throws ``ErrorCode/invalidArgument`` for limits that contradict each other: a handshake quota at or above
    /// the connection limit lets peers that never finish their handshake take every slot, which the quota exists
    /// to prevent (the connection limit refuses new clients before the quota closes a lingering peer).
    public func checkLimits() throws {
        guard maxConnections >= 2 else {
            throw HealthError(
                .invalidArgument,
                "--max-connections \(maxConnections) leaves no room for a client while another connection is in its "
                    + "handshake: give at least 2")
        }
        guard handshakingLimit < maxConnections else {
            throw HealthError(
                .invalidArgument,
                "--max-handshaking \(handshakingLimit) must be below --max-connections \(maxConnections): otherwise "
                    + "connections that never finish their handshake can take every slot and lock clients out")
        }
    }
    /// Seconds a connection has to complete its handshake, and a frame its arrival (plus its length at 64 KiB/s).
    public var handshakeTimeoutSeconds: UInt64 = 10
    /// Seconds replies may stay unread (the reply queue over `maxQueuedReplyBytes`) before the connection closes.
    public var unreadRepliesTimeoutSeconds: UInt64 = 30
    /// Request bytes held in memory at once by every connection together: frames being received and inflated
    /// payloads being handled. Reading pauses when it is spent.
    public var maxBufferedBytes = 512 << 20
    public var idleTimeoutSeconds: UInt64 = 300
    public var maxFrameBytes: UInt64 = 16 << 20
    public var maxInflatedBytes: UInt64 = 64 << 20
    public var maxBatchRows: UInt64 = 100_000
    public var maxPipelinedRequests: UInt64 = 64
    /// Reply bytes queued for a client before the server stops reading its requests.
    public var maxQueuedReplyBytes = 8 << 20
    /// When the write-ahead log is fsynced (`--fsync`).
    public var fsync = FsyncPolicy.always
    /// Start despite damage in the log or snapshots, keeping everything before it (`--repair`).
    public var repair = false
    /// Create a new admin identity (and `admin.token`), also when `identities.json` is missing from a data
    /// directory that holds data (`--reset-admin`).
    public var resetAdmin = false
    /// Seconds between snapshots while the log grows (`--snapshot-interval`); 0: only at shutdown and by size.
    public var snapshotIntervalSeconds = 600
    /// The most bytes of sealed blocks kept in memory, the rest in cold segment files (`--memory-limit`); `nil`:
    /// every block in memory.
    public var memoryLimit: Int?

    /// A byte count: a whole number, optionally followed by K, M, G or T (or KiB, MiB, GiB, TiB: powers of
    /// 1024). Throws ``ErrorCode/invalidArgument`` naming `origin` otherwise.
    public static func parseByteCount(_ text: String, origin: String) throws -> Int {
        let units: [(String, Int)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40), ("K", 1 << 10), ("M", 1 << 20),
            ("G", 1 << 30), ("T", 1 << 40),
        ]
        var digits = Substring(text)
        var scale = 1
        if let (suffix, factor) = units.first(where: { text.hasSuffix($0.0) }) {
            digits = digits.dropLast(suffix.count)
            scale = factor
        }
        guard let number = Int(digits), number >= 0, number <= Int.max / scale else {
            throw HealthError(
                .invalidArgument, "\(origin) takes a byte count such as 2147483648, 512M or 4GiB, not \"\(text)\"")
        }
        return number * scale
    }
    /// Whether clients need a token (`--auth`; SECURITY.md).
    public var auth = AuthMode.required
    /// A backup (`hkq admin backup`) to check and copy into the data directory before starting
    /// (`--restore-from`); the data directory must not exist or be empty.
    public var restoreFrom: String?
    /// Cluster mode: the NATS JetStream servers (`--cluster nats://host:port,...`); `nil`: single-node mode.
    public var cluster: String?
    /// This node's id in the cluster (`--node-id`); required with ``cluster``.
    public var nodeID: String?
    /// P, when this node creates the cluster (`--partitions`).
    public var partitions = 64
    /// Copies of each stream and bucket this node creates (`--replicas`); `nil`: min(3, the JetStream cluster's
    /// size), raising existing ones with fewer (``ClusterReplicas``).
    public var replicas: Int?
    /// Seconds a partition's lease outlives its owner's last renewal (`--lease-ttl`).
    public var leaseTTLSeconds: UInt64 = 10
    /// A standby node takes no share of the partitions while an active node lives (`--standby`).
    public var standby = false
    /// The configuration file named by `--config`, `--config-if-present` or `HKD_CONFIG`, if any.
    public var configurationFile: ConfigurationFile?

    /// A configuration file hkd was pointed at, and whether its settings apply.
    public struct ConfigurationFile: Hashable, Sendable {
        /// Its path.
        public var path: String
        /// Whether it was read; `false` when `--config-if-present` found no file there.
        public var wasRead: Bool
    }

    /// The cluster this node joins; `nil` in single-node mode. Throws ``ErrorCode/invalidArgument`` for
    /// `--cluster` without `--node-id` (or the other way round) and for a bad node id.
    public func clusterOptions() throws -> ClusterOptions? {
        switch (cluster, nodeID) {
        case (nil, nil): return nil
        case (let urls?, let node?):
            try ClusterOptions.checkNodeID(node)
            return ClusterOptions(
                urls: urls, nodeID: node, partitions: partitions, replicas: replicas,
                leaseTTL: .seconds(Int64(clamping: leaseTTLSeconds)), standby: standby,
                snapshotInterval: snapshotIntervalSeconds > 0 ? .seconds(snapshotIntervalSeconds) : nil)
        default: throw HealthError(.invalidArgument, "--cluster and --node-id go together: give both or neither")
        }
    }

    /// Where the metrics and health endpoint listens (`--metrics-listen`); `nil`: not served.
    public var metricsListen: ListenAddress?

    /// Where the HTTP/JSON API listens (`--http-listen`, default 127.0.0.1:7421); `nil` (`off`): not served.
    public var httpListen: ListenAddress? = ListenAddress(host: "127.0.0.1", port: 7421)

    /// A directory to read the dashboard's files (`/`, `/ui/…`) from instead of those built into hkd
    /// (`--dashboard-dir`): Sources/HealthAPI/Dashboard while changing them, so a reload shows an edit.
    public var dashboardDirectory: String?

    /// Chart.js, which the dashboard draws with, served as `/ui/chart.js` (`--chartjs`; Debian's libjs-chart.js).
    public var chartJS = "/usr/share/javascript/chart.js/chart.min.js"

    /// The most HTTP API reads answered at once (`--http-max-streams`), each on a thread of its own while its body
    /// is written (an event stream for as long as it is open); beyond it a read is refused with 503 and
    /// `Retry-After`.
    public var httpMaxStreams = 256

    /// The web origins whose pages may call the HTTP API from a browser (`--http-cors`, `scheme://host[:port]` in
    /// lower case); empty: none (no CORS headers are sent).
    public var httpCORS: [String] = []

    /// `text` as an origin for ``httpCORS``: `http` or `https`, `://`, a host and an optional port, nothing after,
    /// in lower case. Throws ``ErrorCode/invalidArgument`` for anything else, `*` included.
    public static func parseOrigin(_ text: String, origin: String) throws -> String {
        let lowered = text.trimmingCharacters(in: .whitespaces).lowercased()
        let scheme = lowered.hasPrefix("https://") ? "https://" : lowered.hasPrefix("http://") ? "http://" : nil
        let authority = scheme.map { lowered.dropFirst($0.count) } ?? ""
        let allowed = authority.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.:[]".contains($0)) }
        guard scheme != nil, !authority.isEmpty, allowed, !authority.hasPrefix(":"), !authority.hasSuffix(":") else {
            throw HealthError(
                .invalidArgument,
                "\(origin) takes web origins, scheme://host[:port] such as https://dash.example.org (no path, no *), "
                    + "not \"\(text)\"")
        }
        return lowered
    }

    /// A host and port for a listener besides the main one.
    public struct ListenAddress: Hashable, Sendable {
        public var host: String
        public var port: Int
    }

    /// `--tls auto|off`; nil: auto beyond loopback, off on loopback (see ``transportSecurity()``).
    public var tls: TLSMode?
    /// The server certificate (chain), PEM (`--tls-cert`); with ``tlsKey``.
    public var tlsCertificate: String?
    /// The certificate's private key, PEM (`--tls-key`).
    public var tlsKey: String?
    /// Authorities whose certificates clients must present (`--tls-client-ca`, mutual TLS).
    public var tlsClientCA: String?
    /// Listen beyond loopback without TLS (`--allow-plaintext`).
    public var allowPlaintext = false

    /// What `--tls` asks for.
    public enum TLSMode: String, Hashable, Sendable, CaseIterable {
        /// TLS with ``tlsCertificate`` and ``tlsKey`` if given, else with a self-signed certificate made in the
        /// data directory on the first start.
        case auto
        /// Plaintext (refused beyond loopback without ``allowPlaintext``).
        case off
    }

    /// How the listener protects its connections.
    public enum TransportSecurity: Hashable, Sendable {
        case plaintext
        /// The self-signed certificate of the data directory (made on the first start).
        case automaticCertificate
        /// The operator's certificate and key.
        case certificate(file: String, key: String)
    }

    /// Decides the listener's security from `--tls`, `--tls-cert`, `--tls-key`, `--tls-client-ca`,
    /// `--allow-plaintext` and the listening address. Throws ``ErrorCode/invalidArgument`` for contradictions
    /// and for plaintext beyond loopback without `--allow-plaintext`.
    public func transportSecurity() throws -> TransportSecurity {
        let security: TransportSecurity
        switch (tlsCertificate, tlsKey) {
        case (let file?, let key?):
            if tls == .off { throw HealthError(.invalidArgument, "--tls off contradicts --tls-cert and --tls-key") }
            security = .certificate(file: file, key: key)
        case (nil, nil):
            let mode = tls ?? (Self.isLoopback(host) ? .off : .auto)
            security = mode == .auto ? .automaticCertificate : .plaintext
        default:
            throw HealthError(.invalidArgument, "--tls-cert and --tls-key go together: give both or neither")
        }
        guard security == .plaintext else { return security }
        if tlsClientCA != nil {
            throw HealthError(.invalidArgument, "--tls-client-ca needs TLS (--tls auto, or --tls-cert and --tls-key)")
        }
        if !Self.isLoopback(host), !allowPlaintext {
            throw HealthError(
                .invalidArgument,
                "refusing to listen on \(host) without TLS: tokens and health data would cross the network in clear. "
                    + "Use --tls auto (a self-signed certificate; clients pin its fingerprint), --tls-cert and "
                    + "--tls-key, or say --allow-plaintext")
        }
        return security
    }

    /// How log records are written (`--log-format`).
    public var logFormat = ServerLog.Format.text
    /// The least severe records written (`--log-level`).
    public var logLevel = ServerLog.Level.info

    /// How hkd authenticates clients.
    public enum AuthMode: String, Hashable, Sendable, CaseIterable {
        /// Every connection presents a token; grants are enforced (the default).
        case required
        /// No tokens, no grants: every connection may do everything (trusted single-user setups, benchmarks).
        case off
    }
    /// How long deletion records answer changes queries (`--deleted-retention`); older anchors expire.
    public var deletedRetentionSeconds: UInt64 = 7 * 86_400
    /// How long a subscriber may leave its updates unread, with the reply queue full, before it is
    /// disconnected (`--subscriber-timeout`).
    public var subscriberTimeoutSeconds: UInt64 = 30

    public init() {}

    /// Where and how the data is kept.
    public var storage: StorageConfiguration {
        var storage = StorageConfiguration(
            directory: dataDirectory, fsync: fsync, repair: repair, snapshotIntervalSeconds: snapshotIntervalSeconds)
        // With a memory limit, start-up leaves the snapshot's blocks in the mapped files.
        storage.coldSnapshots = memoryLimit != nil
        return storage
    }

    /// How long each step of a connection may take.
    public var deadlines: ConnectionDeadlines {
        ConnectionDeadlines(
            handshake: .seconds(Int64(clamping: handshakeTimeoutSeconds)),
            frame: .seconds(Int64(clamping: handshakeTimeoutSeconds)),
            idle: idleTimeoutSeconds == 0 ? nil : .seconds(Int64(clamping: idleTimeoutSeconds)),
            unreadReplies: .seconds(Int64(clamping: unreadRepliesTimeoutSeconds)))
    }

    /// The limits announced in the welcome.
    public var sessionLimits: SessionLimits {
        SessionLimits(
            maxFrameBytes: maxFrameBytes, maxInflatedBytes: maxInflatedBytes, maxBatchRows: maxBatchRows,
            maxPipelinedRequests: maxPipelinedRequests, idleTimeoutSeconds: idleTimeoutSeconds)
    }

    public static let usage = """
        OVERVIEW: hkd, the health data server: stores HealthKit-style samples and answers HealthKit's queries.

        USAGE: hkd [--listen HOST:PORT] [--data-dir DIR] [--threads N] [options]

        OPTIONS:
          --listen HOST:PORT      Address to listen on (default: 127.0.0.1:7420; port 0 picks a free port).
          --data-dir DIR          Data directory, created if missing (default: ./hkd-data; under systemd the
                                  unit's StateDirectory, as $STATE_DIRECTORY names it).
          --threads N             Event-loop threads (default: one per core).
          --workers N             Worker threads for queries and inserts (default: one per core).
          --max-connections N     Connections served at once, at least 2 (default: 1024).
          --max-handshaking N     Connections in their handshake at once before the one lingering longest
                                  (over 1 s) is closed to make room; a burst of new clients is never refused.
                                  Must be below --max-connections (default: 256, or half of
                                  --max-connections when that is less).
          --idle-timeout SECONDS  Close connections silent this long; 0 never (default: 300). Bytes of an
                                  unfinished frame do not count as activity.
          --handshake-timeout SECONDS
                                  Time to complete the handshake, and to finish a frame once it began (plus
                                  its length at 64 KiB/s) (default: 10).
          --unread-replies-timeout SECONDS
                                  Close a connection whose replies stay unread this long with its reply queue
                                  full (default: 30).
          --max-buffered-bytes N  Request bytes all connections together may hold in memory: frames being
                                  received and inflated payloads being handled; reading pauses when it is
                                  spent (default: 536870912).
          --max-frame-bytes N     Largest frame payload accepted on the wire (default: 16777216).
          --max-batch-rows N      Most rows in one insert batch (default: 100000).
          --fsync always|interval|never
                                  When the write-ahead log reaches the disk (default: always). always: an
                                  acknowledged change survives a power loss (concurrent changes share one
                                  fsync); interval: fsync each second, a power loss may lose the last second;
                                  never: fsync only at snapshots. All three survive a crash of hkd itself.
          --snapshot-interval SECONDS
                                  Snapshot the data this often while it changes, and after 512 MiB of log
                                  (in cluster mode: each partition this node serves, into JetStream, and
                                  after 64 MiB of its stream); 0: only by size and at shutdown (default: 600).
          --memory-limit BYTES    Keep at most this many bytes of sealed blocks (the compressed rows) in
                                  memory; beyond it the blocks of the least recently read series move to
                                  segment files in DIR/cold and are read from there through the page cache
                                  (512M, 4GiB, ...; default: every block in memory).
          --deleted-retention SECONDS
                                  Keep deletion records for changes queries this long; an older anchor gets
                                  anchorExpired and must resync from 0 (default: 604800, 7 days).
          --subscriber-timeout SECONDS
                                  Disconnect a subscriber whose updates stay unread this long while its reply
                                  queue is full (default: 30).
          --repair                Start despite a damaged log, snapshot or manifest: keep everything before the
                                  damage, cut the damaged segment there (a copy is kept as *.damaged), rename
                                  later segments and unusable snapshots to *.damaged and log how many samples
                                  were lost. Without it, hkd refuses to start and names the file and offset.
          --reset-admin           Create a new admin identity and write its token to DIR/admin.token (each
                                  start with it creates one: use it once); needed to start when
                                  identities.json is missing from a directory that holds data.
          --auth required|off     required: every client presents a token and its grants are enforced; the
                                  first start writes the admin token to DIR/admin.token (mode 0600), which
                                  hkq on the same host reads by itself. off: anyone who reaches the port may
                                  read and change everything (default: required; see SECURITY.md).
          --restore-from DIR      Check the backup DIR (from hkq admin backup) against its backup.json, copy
                                  it into the data directory, which must not exist or be empty, then start
                                  from it.
          --metrics-listen HOST:PORT
                                  Serve /metrics (Prometheus text format), /healthz and /readyz over HTTP on
                                  this address, without tokens, from before hkd opens its data (/readyz: 503
                                  until hkd listens on its port) (default: not served; e.g. 127.0.0.1:9420).
          --http-listen HOST:PORT|off
                                  Serve the HTTP/JSON API (/v1, with the same tokens as the main port, as
                                  Authorization: Bearer) on this address, or off; beyond loopback only
                                  with TLS (default: 127.0.0.1:7421), and the dashboard at / (a
                                  browser opens http://127.0.0.1:7421/#token=TOKEN).
          --http-max-streams N    HTTP API reads answered at once, each on a thread of its own while its
                                  body is written (an event stream for as long as it is open), holding
                                  up to about 1.3 MiB while its client is slow; beyond it a read is
                                  answered 503 with Retry-After (default: 256).
          --http-cors ORIGIN      Let web pages from ORIGIN (scheme://host[:port], e.g.
                                  https://dash.example.org) call the HTTP API from a browser: preflight
                                  OPTIONS requests are answered, and responses to that origin carry
                                  Access-Control-Allow-Origin with it (never *; tokens go in Authorization,
                                  no cookies). Repeat the flag or separate origins with commas (default: no
                                  origin, no CORS headers).
          --dashboard-dir DIR     Serve the dashboard's files from DIR instead of those built into hkd (for
                                  changing them: Sources/HealthAPI/Dashboard).
          --chartjs PATH          Chart.js for the dashboard's charts (default:
                                  /usr/share/javascript/chart.js/chart.min.js, from libjs-chart.js).
          --cluster URLS          Cluster mode: keep the data in NATS JetStream at URLS (comma-separated
                                  nats://host:port) instead of DIR's log and snapshots; this node serves the
                                  partitions of the subjects whose leases it holds and sends clients to the
                                  owner of the others (default: single-node; see ARCHITECTURE.md).
          --node-id ID            This node's id in the cluster (1-64 of A-Z a-z 0-9 . _ -); with --cluster.
          --partitions N          Partitions of the subjects when this node creates the cluster (1-4096;
                                  fixed afterwards, the recorded count wins) (default: 64).
          --replicas N            Copies of each partition stream and bucket this node creates (1-5); fewer
                                  than the default is warned about in the log and hkq cluster status
                                  (default: 3, or the JetStream cluster's size when smaller, and existing
                                  streams with fewer are raised to it).
          --lease-ttl SECONDS     How long a partition stays with a node that stopped renewing its lease,
                                  before another node takes it over (default: 10).
          --standby               A hot spare: take no share of the partitions while another node that is not
                                  a standby lives, only partitions nobody holds (default: take a fair share;
                                  nodes hand partitions over until each holds its share).
          --log-format text|json  Log records as text lines or one JSON object per line (default: text).
          --log-level debug|info|warning|error
                                  The least severe records written (default: info).
          --tls auto|off          auto: TLS with --tls-cert/--tls-key, or without them a self-signed
                                  certificate made in DIR on the first start (tls-certificate.pem,
                                  tls-key.pem, mode 0600), reused later; its SHA-256 fingerprint is logged
                                  at every start, for hkq --tls-fingerprint. off: plaintext (default: auto
                                  when listening beyond loopback, off on loopback).
          --tls-cert FILE         Server certificate (chain), PEM; with --tls-key, implies TLS.
          --tls-key FILE          The certificate's private key, PEM.
          --tls-client-ca FILE    Mutual TLS: refuse clients without a certificate signed by an authority in
                                  FILE (PEM).
          --allow-plaintext       Allow listening beyond loopback without TLS (--tls off); without it hkd
                                  refuses to start so.
          --config FILE           Read settings from FILE, one "key = value" per line (the flag names without
                                  dashes; # comments). Every setting can also be given as HKD_<NAME>, e.g.
                                  HKD_MAX_CONNECTIONS=100. Flags win over the environment, which wins over the
                                  file; an unknown key or HKD_ variable is an error. HKD_CONFIG names the file.
          --config-if-present FILE
                                  As --config, but a FILE that does not exist is skipped (the systemd unit's
                                  /etc/hkd.conf); one that exists and cannot be read is still an error.
          --version               Print the version and exit.
          -h, --help              Show this help and exit.

        Logs go to stderr. SIGINT or SIGTERM stops the server cleanly.
        """

    /// What the command line asks for.
    public enum Request: Equatable, Sendable {
        case run(ServerConfiguration)
        case help
        case version
    }

    /// Parses hkd's arguments (without the program name), over the `HKD_*` variables of `environment` and the
    /// `--config` file (or `HKD_CONFIG`), or the `--config-if-present` file when it exists, read with `readFile`:
    /// flags win over the environment, which wins over the file, which wins over the defaults. systemd's
    /// `STATE_DIRECTORY` (its first path) is the default data directory. Throws ``HealthError``
    /// (``ErrorCode/invalidArgument``) naming the bad flag, variable or line.
    public static func parse(
        _ arguments: [String], environment: [String: String] = [:],
        readFile: (String) throws -> String = ServerConfiguration.readConfigFile
    ) throws -> Request {
        var flags: [(setting: ServerSetting, value: String, origin: String)] = []
        var configPath = environment["HKD_CONFIG"]
        var configIsOptional = false
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var flag = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else {
                    throw HealthError(.invalidArgument, "\(flag) needs a value")
                }
                return next
            }
            switch flag {
            case "-h", "--help", "help": return .help
            case "--version": return .version
            case "--config", "--config-if-present":
                configPath = try value()
                configIsOptional = flag == "--config-if-present"
            default:
                guard flag.hasPrefix("--"), let setting = ServerSetting.named(String(flag.dropFirst(2))) else {
                    let hint = flag.hasPrefix("--") ? ServerSetting.hint(for: String(flag.dropFirst(2))) : ""
                    throw HealthError(.invalidArgument, "unknown option \"\(argument)\"\(hint) (see hkd --help)")
                }
                let given = setting.isSwitch ? (inlineValue ?? "true") : try value()
                // A repeatable setting given twice takes both values, as a comma-separated list.
                if setting.isRepeatable, let earlier = flags.firstIndex(where: { $0.setting.key == setting.key }) {
                    flags[earlier].value += "," + given
                } else {
                    flags.append((setting, given, flag))
                }
            }
        }
        var config = ServerConfiguration()
        if let stateDirectory = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            config.dataDirectory = String(stateDirectory)
        }
        if let configPath {
            let text: String?
            do {
                text = try readFile(configPath)
            } catch let error as SystemError where configIsOptional && error.code == ENOENT {
                text = nil
            } catch {
                throw HealthError(.invalidArgument, "cannot read the configuration file \(configPath): \(error)")
            }
            if let text { try config.apply(configFile: text, path: configPath) }
            config.configurationFile = ConfigurationFile(path: configPath, wasRead: text != nil)
        }
        try config.apply(environment: environment)
        for flag in flags { try flag.setting.apply(&config, flag.value, flag.origin) }
        try config.checkLimits()
        return .run(config)
    }

    /// Whether `host` names only this machine: `localhost`, `127.0.0.0/8` or `::1`. hkd warns at start when
    /// it listens on anything else (SECURITY.md).
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Splits `HOST:PORT` (IPv6 as `[::1]:PORT`); `origin` names the flag, variable or line in errors.
    public static func parseAddress(_ text: String, origin: String = "--listen") throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw HealthError(.invalidArgument, "\(origin) needs HOST:PORT, e.g. 127.0.0.1:7420, not \"\(text)\"")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let portText = text[text.index(after: colon)...]
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw HealthError(
                .invalidArgument, "\(origin) needs HOST:PORT with a port from 0 to 65535, not \"\(text)\"")
        }
        return (host, port)
    }
}
