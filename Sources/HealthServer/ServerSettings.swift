import Foundation
import HealthCluster
import HealthModel
import HealthPosix
import HealthStorage

/// Every setting hkd takes, by name, from three places with one meaning: a flag (`--max-connections 100`), an
/// environment variable (`HKD_MAX_CONNECTIONS=100`) and a line of a `--config` file (`max-connections = 100`).
/// Flags win over the environment, which wins over the file; an unknown name is an error naming it.
struct ServerSetting: Sendable {
    /// The name: the flag without its dashes, the file's key.
    let key: String
    /// A switch (`--repair`): no value on the command line; `true`/`false` in a file or the environment.
    let isSwitch: Bool
    /// A list whose flag may be repeated (`--http-cors A --http-cors B` is `--http-cors A,B`).
    var isRepeatable = false
    /// Applies a value; `origin` names where it came from, for errors.
    let apply: @Sendable (inout ServerConfiguration, _ value: String, _ origin: String) throws -> Void

    /// The environment variable: `HKD_` and the key in capitals with `_` for `-`.
    var environmentName: String { "HKD_" + key.uppercased().replacingOccurrences(of: "-", with: "_") }

    init(
        _ key: String, isSwitch: Bool = false,
        _ apply: @escaping @Sendable (inout ServerConfiguration, String, String) throws -> Void
    ) {
        self.key = key
        self.isSwitch = isSwitch
        self.apply = apply
    }

    /// A whole number of at least `minimum`.
    static func number<T: FixedWidthInteger & Sendable>(
        _ key: String, minimum: T = 0, _ path: WritableKeyPath<ServerConfiguration, T> & Sendable
    ) -> ServerSetting {
        ServerSetting(key) { config, text, origin in
            config[keyPath: path] = try wholeNumber(text, minimum: minimum, origin: origin)
        }
    }

    /// A whole number of at least `minimum`, for a setting whose absence means a default computed later.
    static func number<T: FixedWidthInteger & Sendable>(
        _ key: String, minimum: T = 0, _ path: WritableKeyPath<ServerConfiguration, T?> & Sendable
    ) -> ServerSetting {
        ServerSetting(key) { config, text, origin in
            config[keyPath: path] = try wholeNumber(text, minimum: minimum, origin: origin)
        }
    }

    private static func wholeNumber<T: FixedWidthInteger>(_ text: String, minimum: T, origin: String) throws -> T {
        guard let number = T(text) else {
            throw HealthError(.invalidArgument, "\(origin) needs a non-negative whole number, not \"\(text)\"")
        }
        guard number >= minimum else {
            throw HealthError(.invalidArgument, "\(origin) must be at least \(minimum), not \(number)")
        }
        return number
    }

    /// A comma-separated list whose flag may be repeated.
    static func list(
        _ key: String, _ apply: @escaping @Sendable (inout ServerConfiguration, String, String) throws -> Void
    ) -> ServerSetting {
        var setting = ServerSetting(key, apply)
        setting.isRepeatable = true
        return setting
    }

    /// A switch.
    static func flag(_ key: String, _ path: WritableKeyPath<ServerConfiguration, Bool> & Sendable) -> ServerSetting {
        ServerSetting(key, isSwitch: true) { config, text, origin in
            switch text {
            case "true", "yes", "1", "on": config[keyPath: path] = true
            case "false", "no", "0", "off": config[keyPath: path] = false
            default: throw HealthError(.invalidArgument, "\(origin) takes true or false, not \"\(text)\"")
            }
        }
    }

    /// A file or directory path, not empty.
    static func path(_ key: String, _ path: WritableKeyPath<ServerConfiguration, String?> & Sendable) -> ServerSetting {
        ServerSetting(key) { config, text, origin in
            guard !text.isEmpty else { throw HealthError(.invalidArgument, "\(origin) must not be empty") }
            config[keyPath: path] = text
        }
    }

    /// One of a fixed set of words.
    static func choice<T: RawRepresentable & CaseIterable & Sendable>(
        _ key: String, _ path: WritableKeyPath<ServerConfiguration, T> & Sendable
    ) -> ServerSetting where T.RawValue == String {
        ServerSetting(key) { config, text, origin in
            guard let value = T(rawValue: text) else {
                let words = T.allCases.map(\.rawValue)
                throw HealthError(
                    .invalidArgument,
                    "\(origin) takes \(words.dropLast().joined(separator: ", ")) or \(words.last ?? ""), not \"\(text)\""
                )
            }
            config[keyPath: path] = value
        }
    }

    /// Every setting (the order of `hkd --help`).
    static let all: [ServerSetting] = [
        ServerSetting("listen") { config, text, origin in
            (config.host, config.port) = try ServerConfiguration.parseAddress(text, origin: origin)
        },
        ServerSetting("data-dir") { config, text, origin in
            guard !text.isEmpty else { throw HealthError(.invalidArgument, "\(origin) must not be empty") }
            config.dataDirectory = text
        },
        .number("threads", minimum: 1, \.threads),
        .number("workers", minimum: 1, \.workers),
        .number("max-connections", minimum: 1, \.maxConnections),
        .number("max-handshaking", minimum: 1, \.maxHandshakingConnections),
        .number("idle-timeout", \.idleTimeoutSeconds),
        .number("handshake-timeout", minimum: 1, \.handshakeTimeoutSeconds),
        .number("unread-replies-timeout", minimum: 1, \.unreadRepliesTimeoutSeconds),
        .number("max-buffered-bytes", minimum: 1 << 20, \.maxBufferedBytes),
        .number("max-frame-bytes", minimum: 1024, \.maxFrameBytes),
        .number("max-batch-rows", minimum: 1, \.maxBatchRows),
        .choice("fsync", \.fsync),
        .number("snapshot-interval", \.snapshotIntervalSeconds),
        ServerSetting("memory-limit") { config, text, origin in
            config.memoryLimit = try ServerConfiguration.parseByteCount(text, origin: origin)
        },
        .number("deleted-retention", \.deletedRetentionSeconds),
        .number("subscriber-timeout", minimum: 1, \.subscriberTimeoutSeconds),
        .choice("auth", \.auth),
        .flag("repair", \.repair),
        .flag("reset-admin", \.resetAdmin),
        .path("restore-from", \.restoreFrom),
        ServerSetting("metrics-listen") { config, text, origin in
            let (host, port) = try ServerConfiguration.parseAddress(text, origin: origin)
            config.metricsListen = .init(host: host, port: port)
        },
        ServerSetting("http-listen") { config, text, origin in
            guard text != "off" else { return config.httpListen = nil }
            let (host, port) = try ServerConfiguration.parseAddress(text, origin: origin)
            config.httpListen = .init(host: host, port: port)
        },
        .number("http-max-streams", minimum: 1, \.httpMaxStreams),
        ServerSetting.list("http-cors") { config, text, origin in
            config.httpCORS = try text.split(separator: ",").map {
                try ServerConfiguration.parseOrigin(String($0), origin: origin)
            }
        },
        .path("dashboard-dir", \.dashboardDirectory),
        ServerSetting("chartjs") { config, text, origin in
            guard !text.isEmpty else { throw HealthError(.invalidArgument, "\(origin) must not be empty") }
            config.chartJS = text
        },
        ServerSetting("cluster") { config, text, origin in
            guard text.hasPrefix("nats://") || text.hasPrefix("tls://") else {
                throw HealthError(.invalidArgument, "\(origin) takes nats://host:port[,...], not \"\(text)\"")
            }
            config.cluster = text
        },
        .path("node-id", \.nodeID),
        ServerSetting("partitions") { config, text, origin in
            guard let count = Int(text), (1...PartitionLayout.maxPartitions).contains(count) else {
                throw HealthError(
                    .invalidArgument, "\(origin) takes 1 to \(PartitionLayout.maxPartitions), not \"\(text)\"")
            }
            config.partitions = count
        },
        ServerSetting("replicas") { config, text, origin in
            guard let count = Int(text), (1...ClusterReplicas.maximum).contains(count) else {
                throw HealthError(.invalidArgument, "\(origin) takes 1 to \(ClusterReplicas.maximum), not \"\(text)\"")
            }
            config.replicas = count
        },
        .number("lease-ttl", minimum: 1, \.leaseTTLSeconds),
        .flag("standby", \.standby),
        .choice("log-format", \.logFormat),
        .choice("log-level", \.logLevel),
        ServerSetting("tls") { config, text, origin in
            guard let mode = ServerConfiguration.TLSMode(rawValue: text) else {
                throw HealthError(.invalidArgument, "\(origin) takes auto or off, not \"\(text)\"")
            }
            config.tls = mode
        },
        .path("tls-cert", \.tlsCertificate),
        .path("tls-key", \.tlsKey),
        .path("tls-client-ca", \.tlsClientCA),
        .flag("allow-plaintext", \.allowPlaintext),
    ]

    /// The setting named `key`, if any.
    static func named(_ key: String) -> ServerSetting? { all.first { $0.key == key } }

    /// "did you mean" for an unknown name.
    static func hint(for key: String) -> String {
        Suggestion.nearest(to: key, among: all.map(\.key)).map { "; did you mean \"\($0)\"?" } ?? ""
    }
}

extension ServerConfiguration {
    /// Reads a configuration file (at most 1 MiB of UTF-8).
    public static func readConfigFile(_ path: String) throws -> String {
        let bytes = try FileSystem.readFile(path, maxBytes: 1 << 20)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw HealthError(.invalidArgument, "\(path) is not UTF-8 text")
        }
        return text
    }

    /// Applies a `key = value` configuration file: one setting per line, `#` starts a comment, blank lines are
    /// skipped, values may be quoted. Throws naming the file, the line and the problem.
    mutating func apply(configFile text: String, path: String) throws {
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let origin = "\(path):\(index + 1)"
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw HealthError(.invalidArgument, "\(origin): expected key = value, not \"\(trimmed)\"")
            }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            var value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard let setting = ServerSetting.named(key), key != "config" else {
                throw HealthError(.invalidArgument, "\(origin): unknown key \"\(key)\"\(ServerSetting.hint(for: key))")
            }
            try setting.apply(&self, value, "\(origin) \(key)")
        }
    }

    /// Applies the `HKD_*` variables of `environment` that name settings; an unknown `HKD_*` variable is an error
    /// (`HKD_CONFIG` names the configuration file and is read before).
    mutating func apply(environment: [String: String]) throws {
        let byName = Dictionary(uniqueKeysWithValues: ServerSetting.all.map { ($0.environmentName, $0) })
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix("HKD_") {
            if name == "HKD_CONFIG" { continue }
            guard let setting = byName[name] else {
                let key = name.dropFirst(4).lowercased().replacingOccurrences(of: "_", with: "-")
                throw HealthError(
                    .invalidArgument, "unknown environment variable \(name)\(ServerSetting.hint(for: key))")
            }
            try setting.apply(&self, value, name)
        }
    }
}
