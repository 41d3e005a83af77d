import HealthModel
import Testing

@testable import HealthServer

/// How hkd decides between plaintext and TLS from its settings and the listening address.
@Suite("hkd TLS settings")
struct TransportSecurityTests {
    static func security(_ arguments: [String], environment: [String: String] = [:], file: String? = nil) throws
        -> ServerConfiguration.TransportSecurity
    {
        let request = try ServerConfiguration.parse(
            arguments + (file == nil ? [] : ["--config", "hkd.conf"]), environment: environment,
            readFile: { _ in file ?? "" })
        guard case .run(let config) = request else { throw HealthError(.invalidArgument, "\(request)") }
        return try config.transportSecurity()
    }

    @Test("loopback stays plaintext, beyond it TLS auto is the default; --tls and certificate files decide otherwise")
    func decisions() throws {
        #expect(try Self.security([]) == .plaintext)
        #expect(try Self.security(["--listen", "[::1]:0"]) == .plaintext)
        #expect(try Self.security(["--listen", "0.0.0.0:7420"]) == .automaticCertificate)
        #expect(try Self.security(["--tls", "auto"]) == .automaticCertificate)
        #expect(
            try Self.security(["--tls-cert", "c.pem", "--tls-key", "k.pem"])
                == .certificate(file: "c.pem", key: "k.pem"))
        #expect(try Self.security(["--listen", "0.0.0.0:1", "--tls", "off", "--allow-plaintext"]) == .plaintext)
        #expect(try Self.security(["--listen", "10.0.0.1:1", "--tls-client-ca", "ca.pem"]) == .automaticCertificate)
    }

    @Test("every TLS setting works as a flag, an HKD_ variable and a configuration file key")
    func sources() throws {
        let files = ServerConfiguration.TransportSecurity.certificate(file: "c.pem", key: "k.pem")
        #expect(try Self.security([], environment: ["HKD_TLS_CERT": "c.pem", "HKD_TLS_KEY": "k.pem"]) == files)
        #expect(try Self.security([], file: "tls-cert = c.pem\ntls-key = \"k.pem\"\n") == files)
        #expect(try Self.security([], environment: ["HKD_TLS": "auto"]) == .automaticCertificate)
        #expect(
            try Self.security(
                ["--listen", "0.0.0.0:1"], environment: ["HKD_ALLOW_PLAINTEXT": "true"], file: "tls = off")
                == .plaintext)
        let request = try ServerConfiguration.parse([], readFile: { _ in "" })
        guard case .run(let config) = request else { return }
        #expect(config.tlsClientCA == nil && !config.allowPlaintext)
        for key in ["tls", "tls-cert", "tls-key", "tls-client-ca", "allow-plaintext"] {
            #expect(ServerConfiguration.usage.contains("--\(key)"), "\(key)")
        }
    }

    @Test(
        "refusals: plaintext beyond loopback, half a certificate, --tls off with files, a client CA without TLS, bad words"
    )
    func refusals() {
        let cases: [([String], String)] = [
            (["--listen", "0.0.0.0:7420", "--tls", "off"], "refusing to listen on 0.0.0.0 without TLS"),
            (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
            (["--tls-key", "k.pem"], "--tls-cert and --tls-key go together"),
            (["--tls", "off", "--tls-cert", "c.pem", "--tls-key", "k.pem"], "--tls off contradicts"),
            (["--tls-client-ca", "ca.pem"], "--tls-client-ca needs TLS"),
            (["--tls", "maybe"], "takes auto or off"),
            (["--tls-cert", ""], "must not be empty"),
        ]
        for (arguments, message) in cases {
            do {
                _ = try Self.security(arguments)
                Issue.record("\(arguments) was accepted")
            } catch {
                #expect("\(error)".contains(message), "\(arguments): \(error)")
            }
        }
    }
}
