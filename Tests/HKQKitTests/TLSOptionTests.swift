import HKQKit
import HealthClient
import Testing

/// hkq's TLS options and their HKQ_ variables.
@Suite("hkq TLS options")
struct TLSOptionTests {
    static let fingerprint = String(repeating: "AB:", count: 31) + "AB"

    @Test("--tls and each option that implies it; HKQ_ variables when the flags are absent; none means plaintext")
    func resolution() throws {
        #expect(try GlobalOptions.resolve(options: [:], environment: [:]).tls == nil)
        #expect(try GlobalOptions.resolve(options: [:], flags: ["tls"], environment: [:]).tls == TLSClientOptions())
        let pinned = try GlobalOptions.resolve(options: ["tls-fingerprint": [Self.fingerprint]], environment: [:])
        #expect(pinned.tls?.fingerprint == CertificateFingerprint(Self.fingerprint))
        let byEnvironment = try GlobalOptions.resolve(
            options: [:],
            environment: [
                "HKQ_TLS_CA": "ca.pem", "HKQ_TLS_CERT": "c.pem", "HKQ_TLS_KEY": "k.pem",
                "HKQ_TLS_FINGERPRINT": Self.fingerprint.replacingOccurrences(of: ":", with: "").lowercased(),
            ])
        #expect(
            byEnvironment.tls
                == TLSClientOptions(
                    caFile: "ca.pem", fingerprint: CertificateFingerprint(Self.fingerprint), certificateFile: "c.pem",
                    keyFile: "k.pem"))
        #expect(try GlobalOptions.resolve(options: [:], environment: ["HKQ_TLS": "1"]).tls == TLSClientOptions())
        let flagWins = try GlobalOptions.resolve(
            options: ["tls-ca": ["mine.pem"]], environment: ["HKQ_TLS_CA": "env.pem"])
        #expect(flagWins.tls?.caFile == "mine.pem")
    }

    @Test("a malformed fingerprint or half a client certificate is a usage error")
    func usageErrors() {
        #expect(throws: UsageError.self) {
            try GlobalOptions.resolve(options: ["tls-fingerprint": ["AB:CD"]], environment: [:])
        }
        #expect(throws: UsageError.self) {
            try GlobalOptions.resolve(options: ["tls-cert": ["c.pem"]], environment: [:])
        }
    }
}
