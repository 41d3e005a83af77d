import Foundation
import HealthModel
import HealthPosix
import Testing

@testable import HealthServer

@Suite("hkd command line")
struct ServerConfigurationTests {
    @Test("no arguments: the embedded defaults")
    func defaults() throws {
        let request = try ServerConfiguration.parse([])
        guard case .run(let config) = request else {
            Issue.record("\(request)")
            return
        }
        #expect(config.host == "127.0.0.1")
        #expect(config.port == 7420)
        #expect(config.dataDirectory == "./hkd-data")
        #expect(config.threads == 0)
    }

    @Test("--http-cors: repeated or comma-separated origins, lower-cased; flags replace the environment's")
    func corsOrigins() throws {
        let request = try ServerConfiguration.parse(
            ["--http-cors", "https://Dash.Example.org", "--http-cors=http://localhost:3000,http://[::1]:8080"],
            environment: ["HKD_HTTP_CORS": "https://env.example"])
        guard case .run(let config) = request else {
            Issue.record("\(request)")
            return
        }
        #expect(config.httpCORS == ["https://dash.example.org", "http://localhost:3000", "http://[::1]:8080"])
        let fromEnvironment = try ServerConfiguration.parse([], environment: ["HKD_HTTP_CORS": "https://env.example"])
        #expect(fromEnvironment == .run(Self.with { $0.httpCORS = ["https://env.example"] }))
        #expect(try ServerConfiguration.parse([]) == .run(ServerConfiguration()))
        for bad in ["*", "https://dash.example.org/", "ftp://x", "https://", "dash.example.org", "https://a b"] {
            #expect(throws: HealthError.self, "\(bad)") { try ServerConfiguration.parse(["--http-cors", bad]) }
        }
    }

    /// The default configuration changed by `change`.
    static func with(_ change: (inout ServerConfiguration) -> Void) -> ServerConfiguration {
        var config = ServerConfiguration()
        change(&config)
        return config
    }

    @Test("flags, both --flag value and --flag=value")
    func flags() throws {
        let request = try ServerConfiguration.parse([
            "--listen", "[::1]:0", "--data-dir=/tmp/x", "--threads", "3", "--max-connections=5", "--idle-timeout", "0",
        ])
        guard case .run(let config) = request else {
            Issue.record("\(request)")
            return
        }
        #expect(config.host == "::1")
        #expect(config.port == 0)
        #expect(config.dataDirectory == "/tmp/x")
        #expect(config.threads == 3)
        #expect(config.maxConnections == 5)
        #expect(config.idleTimeoutSeconds == 0)
        #expect(config.sessionLimits.idleTimeoutSeconds == 0)
        #expect(config.memoryLimit == nil)
    }

    @Test("--memory-limit takes bytes, with K, M, G, T or KiB, MiB, GiB, TiB for powers of 1024")
    func memoryLimit() throws {
        for (text, bytes) in [
            ("0", 0), ("65536", 65536), ("64K", 64 << 10), ("512M", 512 << 20), ("4GiB", 4 << 30), ("2T", 2 << 40),
        ] {
            guard case .run(let config) = try ServerConfiguration.parse(["--memory-limit", text]) else {
                Issue.record("\(text) not run")
                continue
            }
            #expect(config.memoryLimit == bytes, "\(text)")
        }
    }

    @Test("cluster mode: --cluster with --node-id, the cluster's settings, and what is refused")
    func clusterFlags() throws {
        guard case .run(let single) = try ServerConfiguration.parse([]) else { throw HealthError(.internalError, "") }
        #expect(try single.clusterOptions() == nil)
        #expect(single.replicas == nil)
        guard
            case .run(let node) = try ServerConfiguration.parse([
                "--cluster", "nats://127.0.0.1:4222,nats://127.0.0.1:4223", "--node-id", "hkd-1.a_b", "--partitions",
                "16", "--replicas", "3", "--lease-ttl", "4", "--standby",
            ])
        else { throw HealthError(.internalError, "") }
        let options = try #require(try node.clusterOptions())
        #expect(options.urls == "nats://127.0.0.1:4222,nats://127.0.0.1:4223")
        #expect(options.nodeID == "hkd-1.a_b")
        #expect(options.partitions == 16)
        #expect(options.replicas == 3)
        #expect(options.leaseTTL == .seconds(4))
        #expect(options.standby)
        for arguments in [
            ["--cluster", "127.0.0.1:4222"], ["--partitions", "0"], ["--partitions", "4097"], ["--replicas", "0"],
            ["--replicas", "6"],
            ["--lease-ttl", "0"],
        ] {
            #expect(throws: HealthError.self, "\(arguments)") { try ServerConfiguration.parse(arguments) }
        }
        for (cluster, nodeID) in [("nats://127.0.0.1:4222", nil), (nil, "a"), ("nats://127.0.0.1:4222", "a b")] {
            var config = single
            (config.cluster, config.nodeID) = (cluster, nodeID)
            #expect(throws: HealthError.self, "\(String(describing: cluster)) \(String(describing: nodeID))") {
                try config.clusterOptions()
            }
        }
    }

    @Test("help and version")
    func helpAndVersion() throws {
        #expect(try ServerConfiguration.parse(["--help"]) == .help)
        #expect(try ServerConfiguration.parse(["-h"]) == .help)
        #expect(try ServerConfiguration.parse(["--version"]) == .version)
        #expect(ServerConfiguration.usage.contains("USAGE: hkd"))
        #expect(ServerConfiguration.usage.contains("--data-dir"))
    }

    @Test(
        "bad flags name the culprit",
        arguments: [
            (["--bogus"], "unknown option \"--bogus\" (see hkd --help)"),
            (["--listen", "7420"], "--listen needs HOST:PORT, e.g. 127.0.0.1:7420, not \"7420\""),
            (
                ["--listen", "127.0.0.1:99999"],
                "--listen needs HOST:PORT with a port from 0 to 65535, not \"127.0.0.1:99999\""
            ),
            (["--threads", "two"], "--threads needs a non-negative whole number, not \"two\""),
            (["--data-dir"], "--data-dir needs a value"),
            (["--max-batch-rows", "0"], "--max-batch-rows must be at least 1, not 0"),
            (["--threads", "0"], "--threads must be at least 1, not 0"),
            (["--workers=0"], "--workers must be at least 1, not 0"),
            (
                ["--max-conections", "5"],
                "unknown option \"--max-conections\"; did you mean \"max-connections\"? (see hkd --help)"
            ),
            (["--log-level", "loud"], "--log-level takes debug, info, warning or error, not \"loud\""),
            (
                ["--memory-limit", "lots"],
                "--memory-limit takes a byte count such as 2147483648, 512M or 4GiB, not \"lots\""
            ),
            (
                ["--memory-limit", "-5M"],
                "--memory-limit takes a byte count such as 2147483648, 512M or 4GiB, not \"-5M\""
            ),
            (
                ["--max-connections", "100", "--max-handshaking", "100"],
                "--max-handshaking 100 must be below --max-connections 100: otherwise connections that never finish "
                    + "their handshake can take every slot and lock clients out"
            ),
            (
                ["--max-handshaking", "2000"],
                "--max-handshaking 2000 must be below --max-connections 1024: otherwise connections that never finish "
                    + "their handshake can take every slot and lock clients out"
            ),
            (
                ["--max-connections", "1"],
                "--max-connections 1 leaves no room for a client while another connection is in its handshake: give "
                    + "at least 2"
            ),
        ])
    func badFlags(arguments: [String], message: String) {
        do {
            _ = try ServerConfiguration.parse(arguments)
            Issue.record("\(arguments) accepted")
        } catch let error as HealthError {
            #expect(error.message == message)
            #expect(error.code == .invalidArgument)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("the handshake quota defaults to 256, or half the connection limit when that is less")
    func handshakingLimit() throws {
        for (arguments, limit) in [
            ([], 256), (["--max-connections", "100"], 50), (["--max-connections", "2"], 1),
            (["--max-connections", "100", "--max-handshaking", "99"], 99), (["--max-handshaking", "7"], 7),
        ] {
            guard case .run(let config) = try ServerConfiguration.parse(arguments) else {
                Issue.record("\(arguments) not run")
                continue
            }
            #expect(config.handshakingLimit == limit, "\(arguments)")
        }
        // A file and the environment are checked alike.
        #expect(throws: HealthError.self) {
            try ServerConfiguration.parse(
                ["--config", "/etc/hkd.conf"], environment: ["HKD_MAX_HANDSHAKING": "64"],
                readFile: { _ in "max-connections = 64\n" })
        }
    }

    @Test("--reset-admin and --repair are off unless given")
    func resetAdmin() throws {
        guard case .run(let plain) = try ServerConfiguration.parse([]),
            case .run(let reset) = try ServerConfiguration.parse(["--reset-admin", "--repair"])
        else {
            Issue.record("not a run request")
            return
        }
        #expect(!plain.resetAdmin && !plain.repair)
        #expect(reset.resetAdmin && reset.repair)
        #expect(ServerConfiguration.usage.contains("--reset-admin"))
    }

    /// A run request's configuration, or a recorded issue.
    static func configuration(
        _ arguments: [String], environment: [String: String] = [:], file: String? = nil
    ) throws -> ServerConfiguration? {
        let request = try ServerConfiguration.parse(arguments, environment: environment) { path in
            guard let file, path == "/etc/hkd.conf" else { throw HealthError(.invalidArgument, "no such file") }
            return file
        }
        guard case .run(let config) = request else { return nil }
        return config
    }

    @Test("a configuration file, HKD_ variables and flags: flags win over the environment, which wins over the file")
    func precedence() throws {
        let file = """
            # hkd settings
            max-connections = 100
            idle-timeout = 30   # seconds
            data-dir = "/var/lib/hkd"
            log-format = json
            repair = true
            """
        let fromFile = try #require(try Self.configuration(["--config", "/etc/hkd.conf"], file: file))
        #expect(fromFile.maxConnections == 100 && fromFile.idleTimeoutSeconds == 30)
        #expect(fromFile.dataDirectory == "/var/lib/hkd" && fromFile.logFormat == .json && fromFile.repair)
        let environment = [
            "HKD_CONFIG": "/etc/hkd.conf", "HKD_MAX_CONNECTIONS": "200", "HKD_LOG_LEVEL": "warning", "PATH": "/bin",
        ]
        let withEnvironment = try #require(try Self.configuration([], environment: environment, file: file))
        #expect(withEnvironment.maxConnections == 200 && withEnvironment.idleTimeoutSeconds == 30)
        #expect(withEnvironment.logLevel == .warning)
        let withFlags = try #require(
            try Self.configuration(["--max-connections", "300"], environment: environment, file: file))
        #expect(
            withFlags.maxConnections == 300 && withFlags.logLevel == .warning
                && withFlags.dataDirectory == "/var/lib/hkd")
    }

    @Test(
        "unknown keys and variables, bad lines and values are errors naming them",
        arguments: [
            (
                ["--config", "/etc/hkd.conf"], [:], "max-conections = 5",
                "/etc/hkd.conf:1: unknown key \"max-conections\"; did you mean \"max-connections\"?"
            ),
            (
                ["--config", "/etc/hkd.conf"], [:], "\n threads",
                "/etc/hkd.conf:2: expected key = value, not \"threads\""
            ),
            (["--config", "/etc/hkd.conf"], [:], "threads = 0", "/etc/hkd.conf:1 threads must be at least 1, not 0"),
            ([], ["HKD_THREDS": "2"], "", "unknown environment variable HKD_THREDS; did you mean \"threads\"?"),
            ([], ["HKD_FSYNC": "sometimes"], "", "HKD_FSYNC takes always, interval or never, not \"sometimes\""),
            (["--config", "/nowhere"], [:], "", "cannot read the configuration file /nowhere: no such file"),
        ] as [([String], [String: String], String, String)])
    func badSettings(arguments: [String], environment: [String: String], file: String, message: String) {
        do {
            _ = try Self.configuration(arguments, environment: environment, file: file)
            Issue.record("accepted")
        } catch let error as HealthError {
            #expect(error.message == message)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("hkd --help names every setting")
    func helpNamesEverySetting() {
        for setting in ServerSetting.all {
            #expect(ServerConfiguration.usage.contains("--\(setting.key)"), "\(setting.key) is not in hkd --help")
        }
    }

    @Test("log records: RFC 3339 UTC times, JSON lines that parse, levels in order")
    func logRecords() throws {
        let date = Date(timeIntervalSince1970: 1_764_590_400.25)
        #expect(ServerLog.line(.warning, "x", format: .text, at: date) == "2025-12-01T12:00:00.250Z hkd[warning] x\n")
        let json = ServerLog.line(.error, "a \"quoted\"\nline\u{1}", format: .json, at: date)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(object == ["time": "2025-12-01T12:00:00.250Z", "level": "error", "message": "a \"quoted\"\nline\u{1}"])
        #expect(ServerLog.Level.debug < .info && ServerLog.Level.info < .warning && ServerLog.Level.warning < .error)
    }

    /// The systemd unit, Tools/packaging/hkd.service.
    static func systemdUnit() throws -> String {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        return try String(contentsOf: root.appendingPathComponent("Tools/packaging/hkd.service"), encoding: .utf8)
    }

    /// The unit's lines that start with `key=`, without it.
    static func values(_ key: String, in unit: String) -> [String] {
        unit.split(separator: "\n").filter { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    /// Parses `arguments` as hkd does under systemd: `STATE_DIRECTORY` set, and the file system holding only the
    /// files in `files` (a missing file is ENOENT, as `open` says).
    static func underSystemd(_ arguments: [String], environment: [String: String] = [:], files: [String: String])
        throws -> ServerConfiguration?
    {
        var environment = environment
        environment["STATE_DIRECTORY"] = "/var/lib/hkd:/var/lib/hkd-backups"
        let request = try ServerConfiguration.parse(arguments, environment: environment) { path in
            guard let text = files[path] else { throw SystemError(errno: ENOENT, call: "open") }
            return text
        }
        guard case .run(let config) = request else { return nil }
        return config
    }

    @Test("the systemd unit's command line overrides nothing: with /etc/hkd.conf absent hkd starts on its defaults")
    func systemdUnitCommandLine() throws {
        let unit = try Self.systemdUnit()
        let exec = try #require(Self.values("ExecStart", in: unit).first)
        let words = exec.split(separator: " ").map(String.init)
        #expect(words == ["/usr/local/bin/hkd", "--config-if-present", "/etc/hkd.conf"])
        #expect(Self.values("Environment", in: unit).isEmpty, "a HKD_ variable would override the file")
        #expect(Self.values("StateDirectory", in: unit).first?.split(separator: " ").first == "hkd")
        #expect(Self.values("StateDirectoryMode", in: unit) == ["0700"])
        let arguments = Array(words.dropFirst())
        let absent = try #require(try Self.underSystemd(arguments, files: [:]))
        var expected = ServerConfiguration()
        expected.dataDirectory = "/var/lib/hkd"
        expected.configurationFile = .init(path: "/etc/hkd.conf", wasRead: false)
        #expect(absent == expected, "the defaults, in the unit's StateDirectory")
        // The shipped example: every key it sets applies, none is overridden by the unit.
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let example = try String(
            contentsOf: root.appendingPathComponent("Tools/packaging/hkd.conf"), encoding: .utf8)
        let shipped = try #require(try Self.underSystemd(arguments, files: ["/etc/hkd.conf": example]))
        #expect(shipped.metricsListen == .init(host: "127.0.0.1", port: 9420) && shipped.logFormat == .json)
        let file = "listen = 127.0.0.1:7555\ndata-dir = /srv/hkd\nlog-format = json\n"
        let present = try #require(try Self.underSystemd(arguments, files: ["/etc/hkd.conf": file]))
        #expect(present.host == "127.0.0.1" && present.port == 7555)
        #expect(present.dataDirectory == "/srv/hkd" && present.logFormat == .json, "the file wins over the unit")
        #expect(present.configurationFile == .init(path: "/etc/hkd.conf", wasRead: true))
    }

    @Test("--config-if-present skips only a missing file; --config still refuses one; flags and HKD_ still win")
    func configIfPresent() throws {
        let skipped = try #require(try Self.underSystemd(["--config-if-present", "/etc/none.conf"], files: [:]))
        #expect(skipped.dataDirectory == "/var/lib/hkd")
        #expect(throws: HealthError.self) {
            try Self.underSystemd(["--config", "/etc/none.conf"], files: [:])
        }
        let unreadable = #expect(throws: HealthError.self) {
            try ServerConfiguration.parse(["--config-if-present", "/etc/hkd.conf"]) { _ in
                throw SystemError(errno: EACCES, call: "open")
            }
        }
        #expect(unreadable?.message.hasPrefix("cannot read the configuration file /etc/hkd.conf") == true)
        let flagsWin = try #require(
            try Self.underSystemd(
                ["--config-if-present", "/etc/hkd.conf", "--threads", "3"], environment: ["HKD_LOG_LEVEL": "error"],
                files: ["/etc/hkd.conf": "threads = 2\nlog-level = debug\ndata-dir = /srv/hkd\n"]))
        #expect(flagsWin.threads == 3 && flagsWin.logLevel == .error && flagsWin.dataDirectory == "/srv/hkd")
        #expect(ServerConfiguration.usage.contains("--config-if-present FILE"))
    }

    @Test("README's backup directory is one the unit lets hkd write: a StateDirectory or a ReadWritePaths entry")
    func backupDirectoryIsWritable() throws {
        let unit = try Self.systemdUnit()
        #expect(Self.values("ProtectSystem", in: unit) == ["strict"])
        var writable = Self.values("StateDirectory", in: unit).flatMap { $0.split(separator: " ") }.map {
            "/var/lib/\($0)/"
        }
        writable += Self.values("ReadWritePaths", in: unit).flatMap { $0.split(separator: " ") }.map {
            ($0.hasPrefix("-") ? String($0.dropFirst()) : String($0)) + "/"
        }
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let backups = readme.components(separatedBy: "hkq admin backup ").dropFirst().map {
            String($0.prefix { $0 != "`" && $0 != " " })
        }
        #expect(!backups.isEmpty)
        for path in backups {
            #expect(writable.contains { path.hasPrefix($0) }, "\(path) is not under any of \(writable)")
            #expect(!path.hasPrefix("/var/lib/hkd/"), "a backup inside the data directory")
        }
    }

}
