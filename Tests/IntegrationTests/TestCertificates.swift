import Foundation
import TestSupport

/// Certificates for the TLS tests, made with the `openssl` command line in a temporary directory: a CA, a server
/// certificate it signed for `localhost` and `127.0.0.1`, one it signed that names another host, a client
/// certificate it signed, and a second CA (with its own client certificate) that nobody trusts.
final class TestCertificates: Sendable {
    let directory: TestDirectory

    /// The trusted CA's certificate.
    var ca: String { directory.appending("ca.pem") }
    /// The untrusted CA's certificate.
    var otherCA: String { directory.appending("other-ca.pem") }
    /// A server certificate and key signed by ``ca`` for `localhost` and `127.0.0.1`.
    var server: (certificate: String, key: String) { pair("server") }
    /// A server certificate and key signed by ``ca`` naming only `elsewhere.example`.
    var elsewhere: (certificate: String, key: String) { pair("elsewhere") }
    /// A client certificate and key signed by ``ca``.
    var client: (certificate: String, key: String) { pair("client") }
    /// A client certificate and key signed by ``otherCA``.
    var strangerClient: (certificate: String, key: String) { pair("stranger") }

    init() async throws {
        directory = try TestDirectory(prefix: "hkd-tls")
        try await makeCA("ca", name: "hkd test CA")
        try await makeCA("other-ca", name: "someone else's CA")
        try await sign("server", by: "ca", name: "localhost", extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1")
        try await sign(
            "elsewhere", by: "ca", name: "elsewhere.example", extensions: "subjectAltName=DNS:elsewhere.example")
        try await sign("client", by: "ca", name: "agent", extensions: "extendedKeyUsage=clientAuth")
        try await sign("stranger", by: "other-ca", name: "stranger", extensions: "extendedKeyUsage=clientAuth")
    }

    private func pair(_ name: String) -> (certificate: String, key: String) {
        (directory.appending("\(name).pem"), directory.appending("\(name).key"))
    }

    private func makeCA(_ file: String, name: String) async throws {
        try await Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            directory.appending("\(file).key"), "-out", directory.appending("\(file).pem"), "-subj", "/CN=\(name)",
            "-days", "2",
        ])
    }

    private func sign(_ file: String, by ca: String, name: String, extensions: String) async throws {
        let (certificate, key) = pair(file)
        let request = directory.appending("\(file).csr")
        let extensionFile = directory.appending("\(file).ext")
        try extensions.write(toFile: extensionFile, atomically: false, encoding: .utf8)
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request,
            "-subj", "/CN=\(name)",
        ])
        try await Self.openssl([
            "x509", "-req", "-in", request, "-CA", directory.appending("\(ca).pem"), "-CAkey",
            directory.appending("\(ca).key"), "-CAcreateserial", "-out", certificate, "-days", "2", "-extfile",
            extensionFile,
        ])
    }

    /// Runs `openssl` with `arguments`; throws with its output when it fails.
    static func openssl(_ arguments: [String]) async throws {
        let outcome = try await runTool(["openssl"] + arguments)
        if outcome.status != 0 {
            throw TestToolFailure(command: arguments.joined(separator: " "), output: outcome.printed)
        }
    }
}

/// A tool a test ran failed.
struct TestToolFailure: Error, CustomStringConvertible {
    let command: String
    let output: String
    var description: String { "\(command) failed: \(output)" }
}
