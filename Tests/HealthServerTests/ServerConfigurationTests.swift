import HealthModel
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
    }

    @Test("help and version")
    func helpAndVersion() throws {
        #expect(try ServerConfiguration.parse(["--help"]) == .help)
        #expect(try ServerConfiguration.parse(["-h"]) == .help)
        #expect(try ServerConfiguration.parse(["--version"]) == .version)
        #expect(ServerConfiguration.usage.contains("USAGE: hkd"))
        #expect(ServerConfiguration.usage.contains("--data-dir"))
    }

    @Test("bad flags name the culprit", arguments: [
        (["--bogus"], "unknown option \"--bogus\" (see hkd --help)"),
        (["--listen", "7420"], "--listen needs HOST:PORT, e.g. 127.0.0.1:7420, not \"7420\""),
        (["--listen", "127.0.0.1:99999"], "--listen needs HOST:PORT with a port from 0 to 65535, not \"127.0.0.1:99999\""),
        (["--threads", "two"], "--threads needs a non-negative whole number, not \"two\""),
        (["--data-dir"], "--data-dir needs a value"),
        (["--max-batch-rows", "0"], "--max-batch-rows must be at least 1"),
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
}
