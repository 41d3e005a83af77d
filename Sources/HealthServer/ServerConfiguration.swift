import HealthModel
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
    public var maxHandshakingConnections = 256
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
    /// Whether clients need a token (`--auth`; SECURITY.md).
    public var auth = AuthMode.required

    /// How hkd authenticates clients.
    public enum AuthMode: String, Hashable, Sendable {
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
        StorageConfiguration(
            directory: dataDirectory, fsync: fsync, repair: repair, snapshotIntervalSeconds: snapshotIntervalSeconds)
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
          --data-dir DIR          Data directory, created if missing (default: ./hkd-data).
          --threads N             Event-loop threads (default: one per core).
          --workers N             Worker threads for queries and inserts (default: one per core).
          --max-connections N     Connections served at once (default: 1024).
          --max-handshaking N     Connections in their handshake at once before the one lingering longest
                                  (over 1 s) is closed to make room; a burst of new clients is never refused
                                  (default: 256).
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
                                  Snapshot the data this often while it changes, and after 512 MiB of log;
                                  0: only by log size and at shutdown (default: 600).
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

    /// Parses hkd's arguments (without the program name). Throws ``HealthError`` (``ErrorCode/invalidArgument``)
    /// naming the bad flag or value.
    public static func parse(_ arguments: [String]) throws -> Request {
        var config = ServerConfiguration()
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
                guard let next = remaining.popFirst() else { throw HealthError(.invalidArgument, "\(flag) needs a value") }
                return next
            }
            func number<T: FixedWidthInteger>(_ type: T.Type = T.self) throws -> T {
                let text = try value()
                guard let number = T(text), number >= 0 else {
                    throw HealthError(.invalidArgument, "\(flag) needs a non-negative whole number, not \"\(text)\"")
                }
                return number
            }
            switch flag {
            case "-h", "--help", "help": return .help
            case "--version": return .version
            case "--listen": (config.host, config.port) = try parseAddress(try value())
            case "--data-dir": config.dataDirectory = try value()
            case "--threads": config.threads = try number()
            case "--workers": config.workers = try number()
            case "--max-connections": config.maxConnections = try number()
            case "--idle-timeout": config.idleTimeoutSeconds = try number()
            case "--max-handshaking": config.maxHandshakingConnections = try number()
            case "--handshake-timeout": config.handshakeTimeoutSeconds = try number()
            case "--unread-replies-timeout": config.unreadRepliesTimeoutSeconds = try number()
            case "--max-buffered-bytes": config.maxBufferedBytes = try number()
            case "--max-frame-bytes": config.maxFrameBytes = try number()
            case "--max-batch-rows": config.maxBatchRows = try number()
            case "--fsync":
                let text = try value()
                guard let policy = FsyncPolicy(rawValue: text) else {
                    throw HealthError(.invalidArgument, "--fsync takes always, interval or never, not \"\(text)\"")
                }
                config.fsync = policy
            case "--snapshot-interval": config.snapshotIntervalSeconds = try number()
            case "--repair": config.repair = true
            case "--reset-admin": config.resetAdmin = true
            case "--auth":
                let text = try value()
                guard let mode = AuthMode(rawValue: text) else {
                    throw HealthError(.invalidArgument, "--auth takes required or off, not \"\(text)\"")
                }
                config.auth = mode
            case "--deleted-retention": config.deletedRetentionSeconds = try number()
            case "--subscriber-timeout": config.subscriberTimeoutSeconds = try number()
            default: throw HealthError(.invalidArgument, "unknown option \"\(argument)\" (see hkd --help)")
            }
        }
        if config.dataDirectory.isEmpty { throw HealthError(.invalidArgument, "--data-dir must not be empty") }
        if config.maxFrameBytes < 1024 { throw HealthError(.invalidArgument, "--max-frame-bytes must be at least 1024") }
        if config.maxBatchRows == 0 { throw HealthError(.invalidArgument, "--max-batch-rows must be at least 1") }
        return .run(config)
    }

    /// Whether `host` names only this machine: `localhost`, `127.0.0.0/8` or `::1`. hkd warns at start when
    /// it listens on anything else (SECURITY.md).
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Splits `HOST:PORT` (IPv6 as `[::1]:PORT`).
    public static func parseAddress(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw HealthError(.invalidArgument, "--listen needs HOST:PORT, e.g. 127.0.0.1:7420, not \"\(text)\"")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let portText = text[text.index(after: colon)...]
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw HealthError(.invalidArgument, "--listen needs HOST:PORT with a port from 0 to 65535, not \"\(text)\"")
        }
        return (host, port)
    }
}
