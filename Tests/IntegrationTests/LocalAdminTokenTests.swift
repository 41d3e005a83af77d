import Foundation
import HealthClient
import HealthModel
import TestSupport
import Testing

/// HealthClient's opt-in discovery of the admin token hkd wrote in its data directory (issue 39): the rules of
/// hkq's discovery, which uses the same code — loopback servers only, a readable non-empty file, a local error
/// with a code naming the file otherwise.
@Suite("local admin token discovery")
struct LocalAdminTokenTests {
    @Test("a client asking for the local admin token finds it in hkd's data directory and logs in as admin")
    func discoversAndConnects() async throws {
        let server = try await TestServer()
        var configuration = ClientConfiguration(host: "127.0.0.1", port: server.port, clientName: "local-agent")
        #expect(configuration.token.isEmpty, "never implicit: a new configuration holds no token")
        try configuration.useLocalAdminToken(dataDirectory: server.dataDirectory)
        #expect(configuration.token == server.token)
        #expect(
            try ClientConfiguration.localAdminToken(host: "localhost", dataDirectory: server.dataDirectory + "/")
                == server.token)
        let client = HealthClient(configuration)
        defer { client.close() }
        let welcome = try await client.connect()
        #expect(welcome.identity == "admin")
        _ = try await client.serverInfo()
    }

    @Test(
        "a server not on a loopback address is refused before any file is read",
        arguments: [
            "db.example.org", "10.0.0.1", "192.168.1.20", "::2", "localhost.example.org",
        ])
    func refusesRemoteHosts(host: String) throws {
        let directory = try TestDirectory()
        try "hkd1_1_secret\n".write(toFile: directory.appending("admin.token"), atomically: false, encoding: .utf8)
        var configuration = ClientConfiguration(host: host, port: 7420)
        let error = try #require(throws: HealthClientError.self) {
            try configuration.useLocalAdminToken(dataDirectory: directory.path)
        }
        #expect(error.origin == .local && error.code == .invalidArgument && error.code.rawValue == 208)
        #expect(error.message.contains("'\(host)'"), "\(error)")
        #expect(!error.message.contains(directory.path), "\(error)")
        #expect(configuration.token.isEmpty, "a failed discovery leaves the configuration as it was")
    }

    @Test("a missing or empty token file is a local unauthenticated error naming the file")
    func missingFile() throws {
        let directory = try TestDirectory()
        var configuration = ClientConfiguration(host: "127.0.0.1", port: 7420, token: "kept")
        let missing = try #require(throws: HealthClientError.self) {
            try configuration.useLocalAdminToken(dataDirectory: directory.path)
        }
        #expect(missing.origin == .local && missing.code == .unauthenticated && missing.code.rawValue == 300)
        #expect(missing.message.contains("'\(directory.path)/admin.token'"), "\(missing)")
        #expect(missing.message.contains("No such file"), "\(missing)")
        #expect(configuration.token == "kept")

        try " \n".write(toFile: directory.appending("admin.token"), atomically: false, encoding: .utf8)
        let empty = try #require(throws: HealthClientError.self) {
            try ClientConfiguration.localAdminToken(host: "::1", tokenFile: directory.appending("admin.token"))
        }
        #expect(empty.code == .unauthenticated && empty.message.contains("is empty"), "\(empty)")
        #expect(empty.message.contains(directory.appending("admin.token")))
    }

    @Test("the token is trimmed, and the file's mode is not checked (hkd keeps admin.token 0600 itself)")
    func trimsAndReadsAnyMode() throws {
        let directory = try TestDirectory()
        let path = directory.appending("admin.token")
        try "  hkd1_7_abc \n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, 0o644) == 0)
        #expect(try ClientConfiguration.localAdminToken(host: "127.0.0.2", tokenFile: path) == "hkd1_7_abc")
        #expect(ClientConfiguration.defaultDataDirectory == "./hkd-data")
    }
}
