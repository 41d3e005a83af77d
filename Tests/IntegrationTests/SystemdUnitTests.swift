import Foundation
import HealthClient
import TestSupport
import Testing

/// Tools/packaging/hkd.service as systemd reads it and as hkd runs under it: `systemd-analyze verify` accepts it,
/// and its command line starts hkd with or without /etc/hkd.conf, the file's settings applying.
@Suite("the systemd unit", .serialized)
struct SystemdUnitTests {
    /// The unit's text.
    static func unit() throws -> String {
        try String(
            contentsOf: TestServer.packageRoot.appendingPathComponent("Tools/packaging/hkd.service"), encoding: .utf8)
    }

    /// The unit's ExecStart words after the binary, with the configuration file's path replaced by `config`.
    static func arguments(configAt config: String) throws -> [String] {
        let exec = try #require(try unit().split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        return exec.split(separator: " ").dropFirst().map { $0 == "/etc/hkd.conf" ? config : String($0) }
    }

    @Test("systemd-analyze verify accepts the unit, without a warning")
    func verify() async throws {
        let analyze = "/usr/bin/systemd-analyze"
        try #require(
            FileManager.default.isExecutableFile(atPath: analyze),
            "systemd-analyze is missing: install Debian's systemd package (.ci/run does)")
        let scratch = try TestDirectory(prefix: "hkd-unit")
        // verify checks that ExecStart's binary exists: point it at the built hkd.
        let text = try Self.unit().replacingOccurrences(
            of: "/usr/local/bin/hkd", with: try TestServer.binary("hkd").path)
        try text.write(toFile: scratch.appending("hkd.service"), atomically: false, encoding: .utf8)
        // --man=no: the unit's Documentation= names hkq(1), installed by hand (README), not here.
        let verified = try await runChild(analyze, ["verify", "--man=no", scratch.appending("hkd.service")])
        #expect(verified.status == 0, "\(verified.printed)")
        #expect(verified.printed.isEmpty, "warnings: \(verified.printed)")
    }

    @Test("the unit's command line: /etc/hkd.conf's listen, data-dir and log-format apply; without it hkd starts")
    func commandLine() async throws {
        let state = try TestDirectory(prefix: "hkd-state")
        let elsewhere = try TestDirectory(prefix: "hkd-conf-data")
        let etc = try TestDirectory(prefix: "hkd-etc")
        let config = etc.appending("hkd.conf")
        try
            "listen = 127.0.0.1:0\nhttp-listen = 127.0.0.1:0\ndata-dir = \(elsewhere.path)\nlog-format = json\nauth = off\n"
            .write(
                toFile: config, atomically: false, encoding: .utf8)
        // The unit's STATE_DIRECTORY (StateDirectory=hkd …) is the default data directory; the file moves it.
        let environment = ["STATE_DIRECTORY": "\(state.path):\(etc.path)/backups"]
        let configured = try await TestServer(
            exactly: try Self.arguments(configAt: config), environment: environment, dataDirectory: elsewhere.path)
        let client = HealthClient(ClientConfiguration(port: configured.port, retry: .none))
        try await client.ping()
        client.close()
        #expect(await configured.stop() == 0)
        let lines = configured.logText.split(separator: "\n")
        #expect(configured.logText.contains("settings from \(config)"), "\(configured.logText)")
        for line in lines {
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: String], "not JSON: \(line)")
        }
        #expect(FileManager.default.fileExists(atPath: elsewhere.appending("wal")), "data in the file's data-dir")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path).isEmpty)

        // No /etc/hkd.conf: hkd starts on its defaults, in the unit's state directory (the port from the
        // environment, so that the test does not take 7420 and 7421).
        try FileManager.default.removeItem(atPath: config)
        let bare = try await TestServer(
            exactly: try Self.arguments(configAt: config),
            environment: environment.merging(["HKD_LISTEN": "127.0.0.1:0", "HKD_HTTP_LISTEN": "127.0.0.1:0"]) { $1 },
            dataDirectory: state.path)
        #expect(!bare.token.isEmpty, "admin.token in the state directory")
        let admin = bare.client()
        try await admin.ping()
        admin.close()
        #expect(await bare.stop() == 0)
        #expect(!bare.logText.hasPrefix("{"), "text logs by default")
        #expect(bare.logText.contains("no configuration file at \(config) (--config-if-present)"), "\(bare.logText)")
    }
}
