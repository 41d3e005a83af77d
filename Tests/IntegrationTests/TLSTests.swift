import Foundation
import HealthClient
import HealthModel
import HealthServer
import HealthTLS
import TestSupport
import Testing

/// TLS against the real hkd: `openssl s_client` and Python's `ssl` as foreign clients, HealthClient's checks
/// (pin, CA, host name, expiry, plaintext on either side), mutual TLS, `--tls auto`'s certificate across
/// restarts, and the refusal to listen beyond loopback in plaintext.
@Suite("TLS", .serialized)
struct TLSTests {
    /// The fingerprint hkd logged for its certificate.
    static func loggedFingerprint(_ server: TestServer) throws -> CertificateFingerprint {
        let line = try #require(server.logText.split(separator: "\n").first { $0.contains("SHA-256 fingerprint") })
        let text = try #require(line.split(separator: " ").last)
        return try #require(CertificateFingerprint(String(text)))
    }

    /// A client of `server` with `tls`, as the admin identity, connecting to `host`.
    static func client(_ server: TestServer, tls: TLSClientOptions?, host: String = "127.0.0.1") -> HealthClient {
        HealthClient(
            ClientConfiguration(
                host: host, port: server.port, token: server.token, clientName: "tls-test",
                connectTimeout: .seconds(10), requestTimeout: .seconds(30), retry: .none, tls: tls))
    }

    /// Connects and expects the failure `code`; returns its message.
    @discardableResult
    static func expectRefusal(
        _ client: HealthClient, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> String {
        defer { client.close() }
        do {
            _ = try await client.serverInfo()
            Issue.record("connected, expected \(code)", sourceLocation: sourceLocation)
            return ""
        } catch {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(!error.isRetryable, sourceLocation: sourceLocation)
            return error.message
        }
    }

    @Test(
        "openssl s_client completes a TLS 1.3 (and 1.2, not 1.1) handshake with --tls auto and sees the logged fingerprint"
    )
    func opensslClient() async throws {
        let hkd = try await TestServer(arguments: ["--tls", "auto"])
        let certificate = hkd.dataDirectory + "/tls-certificate.pem"
        let handshake = try await runTool(
            [
                "openssl", "s_client", "-connect", "127.0.0.1:\(hkd.port)", "-CAfile", certificate,
                "-verify_return_error", "-verify_ip", "127.0.0.1",
            ], input: "")
        let output = handshake.printed
        #expect(handshake.status == 0, "\(output)")
        #expect(output.contains("Verify return code: 0 (ok)"), "\(output)")
        #expect(output.contains("TLSv1.3"), "\(output)")
        // The certificate s_client received, fingerprinted by openssl itself.
        let printed = try await runTool(["openssl", "x509", "-noout", "-fingerprint", "-sha256"], input: output).printed
        let logged = try Self.loggedFingerprint(hkd)
        #expect(printed.contains("sha256 Fingerprint=\(logged)"), "\(printed) vs \(logged)")
        #expect(CertificateFingerprint(printed) == logged)
        // TLS 1.2 is the minimum: accepted; TLS 1.1 (allowed on the client's side) gets a protocol_version alert.
        let tls12 = try await runTool(
            ["openssl", "s_client", "-connect", "127.0.0.1:\(hkd.port)", "-tls1_2"], input: ""
        ).printed
        #expect(tls12.contains("Protocol  : TLSv1.2"), "\(tls12)")
        let tls11 = try await runTool(
            [
                "openssl", "s_client", "-connect", "127.0.0.1:\(hkd.port)", "-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0",
            ], input: "")
        #expect(tls11.status != 0)
        #expect(tls11.printed.contains("alert protocol version"), "\(tls11.printed)")
        await hkd.stop()
    }

    @Test("no session resumption: hkd sends no TLS 1.2 ticket, and a session openssl saved is not resumed")
    func noResumption() async throws {
        let hkd = try await TestServer(arguments: ["--tls", "auto"])
        let directory = try TestDirectory(prefix: "tls-sessions")
        for version in ["-tls1_2", "-tls1_3"] {
            let session = directory.appending("session\(version)")
            let connect = ["openssl", "s_client", "-connect", "127.0.0.1:\(hkd.port)", version]
            let first = try await runTool(connect + ["-sess_out", session], input: "")
            #expect(first.status == 0, "\(first.printed)")
            #expect(first.printed.contains("New, TLSv1"), "\(version): \(first.printed)")
            #expect(!first.printed.contains("TLS session ticket:"), "\(version): a ticket was issued")
            // With neither a ticket nor a session cache on the server, s_client may have nothing worth saving.
            guard FileManager.default.fileExists(atPath: session) else { continue }
            let second = try await runTool(connect + ["-sess_in", session], input: "")
            #expect(second.status == 0, "\(second.printed)")
            #expect(second.printed.contains("New, TLSv1"), "\(version): \(second.printed)")
            #expect(!second.printed.contains("Reused, TLSv1"), "\(version): the session was resumed")
        }
        await hkd.stop()
    }

    @Test("a Python ssl client verifies hkd, completes the token handshake and pings over TLS")
    func pythonClient() async throws {
        let hkd = try await TestServer(arguments: ["--tls", "auto"])
        let script = TestServer.packageRoot.appendingPathComponent("Tests/TLS/tls_ping.py").path
        let ping = try await runTool([
            "python3", script, "127.0.0.1", "\(hkd.port)", hkd.dataDirectory + "/tls-certificate.pem", "localhost",
            hkd.token,
        ])
        let output = ping.printed
        #expect(ping.status == 0, "\(output)")
        #expect(output.hasPrefix("pong ") && output.contains(" over TLSv1.3"), "\(output)")
        await hkd.stop()
    }

    @Test("--tls auto makes the certificate and key with mode 0600 and keeps them, and their fingerprint, on restart")
    func automaticCertificate() async throws {
        let first = try await TestServer(arguments: ["--tls", "auto"])
        let fingerprint = try Self.loggedFingerprint(first)
        #expect(first.logText.contains("created the self-signed TLS certificate"))
        for file in ["tls-certificate.pem", "tls-key.pem"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: first.dataDirectory + "/" + file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file)")
        }
        #expect(
            try CertificateFingerprint.ofCertificateFile(first.dataDirectory + "/tls-certificate.pem") == fingerprint)
        // The pinned client reconnects over TLS after the restart, with its retries.
        let pinned = HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: first.port, token: first.token, clientName: "tls-reconnect",
                tls: TLSClientOptions(fingerprint: fingerprint)))
        defer { pinned.close() }
        _ = try await pinned.serverInfo()
        await first.stop()
        let second = try await first.restart(samePort: true)
        #expect(second.logText.contains("using the self-signed TLS certificate"))
        #expect(try Self.loggedFingerprint(second) == fingerprint)
        let info = try await pinned.serverInfo()
        #expect(info.connections >= 1)
        await second.stop()
    }

    @Test("pinning: the right fingerprint connects in either spelling, a wrong one is fingerprintMismatch")
    func pinning() async throws {
        let hkd = try await TestServer(arguments: ["--tls", "auto"])
        let fingerprint = try Self.loggedFingerprint(hkd)
        let lower = fingerprint.description.replacingOccurrences(of: ":", with: "").lowercased()
        let client = Self.client(hkd, tls: TLSClientOptions(fingerprint: CertificateFingerprint(lower)))
        _ = try await client.serverInfo()
        client.close()
        var wrong = fingerprint.bytes
        wrong[0] ^= 0xff
        let message = await Self.expectRefusal(
            Self.client(hkd, tls: TLSClientOptions(fingerprint: CertificateFingerprint(bytes: wrong))),
            .fingerprintMismatch)
        #expect(message.contains("\(fingerprint)"), "\(message)")
        // Without a pin or CA the self-signed certificate is not trusted.
        await Self.expectRefusal(Self.client(hkd, tls: TLSClientOptions()), .certificateUntrusted)
        await hkd.stop()
    }

    @Test("a CA-signed certificate: trusted CA and host connect; another CA, another name, expiry are refused")
    func certificateChecks() async throws {
        let certificates = try await TestCertificates()
        let hkd = try await TestServer(arguments: [
            "--tls-cert", certificates.server.certificate, "--tls-key", certificates.server.key,
        ])
        for host in ["127.0.0.1", "localhost"] {
            let client = Self.client(hkd, tls: TLSClientOptions(caFile: certificates.ca), host: host)
            _ = try await client.serverInfo()
            client.close()
        }
        await Self.expectRefusal(
            Self.client(hkd, tls: TLSClientOptions(caFile: certificates.otherCA)), .certificateUntrusted)
        await hkd.stop()

        let elsewhere = try await TestServer(arguments: [
            "--tls-cert", certificates.elsewhere.certificate, "--tls-key", certificates.elsewhere.key,
        ])
        await Self.expectRefusal(
            Self.client(elsewhere, tls: TLSClientOptions(caFile: certificates.ca)), .hostnameMismatch)
        await elsewhere.stop()

        let expired = try SelfSignedCertificate.generate(
            commonName: "localhost", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], validFrom: -7200,
            validFor: 3600)
        let files = (certificates.directory.appending("expired.pem"), certificates.directory.appending("expired.key"))
        try expired.write(certificateTo: files.0, keyTo: files.1)
        let stale = try await TestServer(arguments: ["--tls-cert", files.0, "--tls-key", files.1])
        await Self.expectRefusal(Self.client(stale, tls: TLSClientOptions(caFile: files.0)), .certificateExpired)
        await stale.stop()
    }

    @Test("plaintext meets TLS: each side is told what the other speaks, with tlsRequired and tlsUnavailable")
    func mixedTransports() async throws {
        let secure = try await TestServer(arguments: ["--tls", "auto"])
        let message = await Self.expectRefusal(Self.client(secure, tls: nil), .tlsRequired)
        #expect(message.contains("speaks TLS"), "\(message)")
        try await secure.waitForLog("a plaintext client on the TLS port")
        await secure.stop()

        let plain = try await TestServer()
        let refusal = await Self.expectRefusal(
            Self.client(
                plain, tls: TLSClientOptions(fingerprint: CertificateFingerprint(bytes: Array(repeating: 1, count: 32)))
            ),
            .tlsUnavailable)
        #expect(refusal.contains("does not speak TLS"), "\(refusal)")
        try await plain.waitForLog("a TLS hello on the plaintext port")
        await plain.stop()
    }

    @Test("over the connection limit a TLS client gets the plaintext refusal as the retryable tooManyConnections")
    func connectionLimit() async throws {
        let hkd = try await TestServer(arguments: ["--tls", "auto", "--max-connections", "2"])
        let tls = TLSClientOptions(fingerprint: try Self.loggedFingerprint(hkd))
        let holders = [Self.client(hkd, tls: tls), Self.client(hkd, tls: tls)]
        defer { for holder in holders { holder.close() } }
        for holder in holders { _ = try await holder.serverInfo() }
        let refused = Self.client(hkd, tls: tls)
        defer { refused.close() }
        do {
            _ = try await refused.serverInfo()
            Issue.record("a third connection was served over a limit of 2")
        } catch {
            #expect(error.code == .tooManyConnections, "\(error)")
            #expect(error.isRetryable)
        }
        await hkd.stop()
    }

    @Test("mutual TLS: no client certificate or one of another CA is refused, one of the client CA is served")
    func mutualTLS() async throws {
        let certificates = try await TestCertificates()
        let hkd = try await TestServer(arguments: [
            "--tls-cert", certificates.server.certificate, "--tls-key", certificates.server.key, "--tls-client-ca",
            certificates.ca,
        ])
        #expect(hkd.logText.contains("mutual TLS"))
        await Self.expectRefusal(Self.client(hkd, tls: TLSClientOptions(caFile: certificates.ca)), .certificateRefused)
        let stranger = TLSClientOptions(
            caFile: certificates.ca, certificateFile: certificates.strangerClient.certificate,
            keyFile: certificates.strangerClient.key)
        await Self.expectRefusal(Self.client(hkd, tls: stranger), .certificateRefused)
        let member = TLSClientOptions(
            caFile: certificates.ca, certificateFile: certificates.client.certificate, keyFile: certificates.client.key)
        let client = Self.client(hkd, tls: member)
        defer { client.close() }
        _ = try await client.serverInfo()
        await hkd.stop()
    }

    @Test(
        "beyond loopback: --tls off without --allow-plaintext exits naming the fix; the default and --tls auto serve TLS"
    )
    func nonLoopback() async throws {
        do {
            let refused = try await TestServer(host: "0.0.0.0", arguments: ["--tls", "off"])
            Issue.record("hkd listened on 0.0.0.0 in plaintext")
            await refused.stop()
        } catch {
            #expect("\(error)".contains("refusing to listen on 0.0.0.0 without TLS"), "\(error)")
            #expect("\(error)".contains("--allow-plaintext"), "\(error)")
        }
        for arguments in [[], ["--tls", "auto"]] {
            let hkd = try await TestServer(host: "0.0.0.0", arguments: arguments)
            #expect(hkd.logText.contains("; TLS)"), "\(hkd.logText)")
            let client = Self.client(hkd, tls: TLSClientOptions(fingerprint: try Self.loggedFingerprint(hkd)))
            _ = try await client.serverInfo()
            client.close()
            await hkd.stop()
        }
        let open = try await TestServer(host: "0.0.0.0", arguments: ["--tls", "off", "--allow-plaintext"])
        #expect(open.logText.contains("; plaintext)"))
        _ = try await Self.client(open, tls: nil).serverInfo()
        await open.stop()
    }

    @Test("an anchored subscription over TLS reconnects over TLS after hkd restarts and misses nothing")
    func subscriptionReconnectsOverTLS() async throws {
        let first = try await TestServer(arguments: ["--auth", "off", "--tls", "auto"])
        let tls = TLSClientOptions(fingerprint: try Self.loggedFingerprint(first))
        let writer = LiveReconnectTests.patientClient(first.port, name: "writer", tls: tls)
        let watcher = LiveReconnectTests.patientClient(first.port, name: "watcher", tls: tls)
        defer { LiveReconnectTests.cleanUp(writer, watcher) }
        let received = DeliveredUUIDs()
        let reader = LiveReconnectTests.collectChanges(watcher, into: received)
        defer { reader.cancel() }
        let (second, _, _) = try await LiveReconnectTests.insertAcrossRestart(first, writer: writer, received: received)
        #expect(!second.logText.contains("a plaintext client on the TLS port"))
        await second.stop()
    }

    @Test(
        "the hkq binary over TLS: pinned with --tls-fingerprint it works; a wrong pin exits 77, plaintext 1, naming the code"
    )
    func hkqBinary() async throws {
        let hkd = try await TestServer(arguments: ["--tls", "auto"])
        let fingerprint = try Self.loggedFingerprint(hkd)
        let ok = try await HKQBinaryTests.hkq(hkd.hkqServer + ["--tls-fingerprint", "\(fingerprint)", "server-info"])
        #expect(ok.status == 0, "\(ok.err)")
        #expect(ok.out.contains("VERSION"), "\(ok.out)")
        var wrong = fingerprint.bytes
        wrong[5] ^= 0x10
        let refused = try await HKQBinaryTests.hkq(
            hkd.hkqServer + ["--tls-fingerprint", "\(CertificateFingerprint(bytes: wrong)!)", "server-info"])
        #expect(refused.status == 77, "the server failed verification")
        #expect(refused.err.contains("(fingerprintMismatch (307))"), "\(refused.err)")
        let plaintext = try await HKQBinaryTests.hkq(hkd.hkqServer + ["server-info"])
        #expect(plaintext.status == 1)
        #expect(plaintext.err.contains("(tlsRequired (108))"), "\(plaintext.err)")
        await hkd.stop()
    }
}
