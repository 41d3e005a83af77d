import HealthPosix
import TestSupport
import Testing

@testable import HealthTLS

/// The TLS engine without sockets: a client and a server engine pass their records to each other in memory, as
/// the event loop and the client stream do with socket bytes; fingerprints in both spellings.
@Suite("TLS engine")
struct TLSEngineTests {
    /// A self-signed certificate for localhost written to a temporary directory, and a server context for it.
    static func server(validFrom: Int = -3600, validFor: Int = 86_400) throws -> (
        context: TLSContext, certificate: SelfSignedCertificate, directory: String
    ) {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hk-tls")
        let certificate = try SelfSignedCertificate.generate(
            commonName: "localhost", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], validFrom: validFrom,
            validFor: validFor)
        try certificate.write(certificateTo: directory + "/cert.pem", keyTo: directory + "/key.pem")
        let context = try TLSContext.server(certificateFile: directory + "/cert.pem", keyFile: directory + "/key.pem")
        return (context, certificate, directory)
    }

    /// Runs the handshake between two engines in memory; throws the first side's failure.
    static func handshake(client: TLSEngine, server: TLSEngine) throws {
        for _ in 0..<10 {
            let clientDone = try client.handshake()
            var toServer: [UInt8] = []
            client.takeOutput(appendingTo: &toServer)
            toServer.withUnsafeBytes { server.feed($0) }
            let serverDone = try server.handshake()
            var toClient: [UInt8] = []
            server.takeOutput(appendingTo: &toClient)
            toClient.withUnsafeBytes { client.feed($0) }
            if clientDone && serverDone { return }
        }
        Issue.record("the handshake did not finish in 10 rounds")
    }

    @Test("a pinned client and the server shake hands in memory and carry bytes both ways, TLS 1.3")
    func roundTrip() throws {
        let (serverContext, certificate, directory) = try Self.server()
        defer { try? FileSystem.removeTree(directory) }
        let clientContext = try TLSContext.client(TLSClientOptions(fingerprint: certificate.fingerprint))
        let client = try TLSEngine(context: clientContext, host: "localhost")
        let server = try TLSEngine(context: serverContext)
        try Self.handshake(client: client, server: server)
        #expect(client.protocolVersion == "TLSv1.3")
        #expect(client.peerFingerprint == certificate.fingerprint)
        // 100 KiB spans several records.
        let message = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try client.write(message)
        var records: [UInt8] = []
        client.takeOutput(appendingTo: &records)
        #expect(records.count > message.count)
        var received: [UInt8] = []
        // Fed in small pieces, as a socket may deliver them.
        var offset = 0
        while offset < records.count {
            let end = min(offset + 1000, records.count)
            records[offset..<end].withUnsafeBytes { server.feed($0) }
            #expect(try server.read(appendingTo: &received))
            offset = end
        }
        #expect(received == message)
    }

    @Test("checks: a wrong pin, an untrusted certificate, another host name, an expired certificate")
    func verification() throws {
        let (serverContext, certificate, directory) = try Self.server()
        defer { try? FileSystem.removeTree(directory) }
        var wrong = certificate.fingerprint.bytes
        wrong[31] ^= 1
        let cases: [(TLSClientOptions, String, TLSError.Kind)] = [
            (TLSClientOptions(fingerprint: CertificateFingerprint(bytes: wrong)), "localhost", .fingerprintMismatch),
            (TLSClientOptions(), "localhost", .untrustedCertificate),
            (TLSClientOptions(caFile: directory + "/cert.pem"), "elsewhere.example", .hostnameMismatch),
            (TLSClientOptions(caFile: directory + "/cert.pem"), "10.1.2.3", .hostnameMismatch),
        ]
        for (options, host, kind) in cases {
            let client = try TLSEngine(context: try TLSContext.client(options), host: host)
            #expect(throws: TLSError.self) {
                do {
                    try Self.handshake(client: client, server: try TLSEngine(context: serverContext))
                } catch let error as TLSError {
                    #expect(error.kind == kind, "\(host): \(error)")
                    throw error
                }
            }
        }
        // Trusted by its CA file and named right: it works.
        let good = try TLSEngine(
            context: try TLSContext.client(TLSClientOptions(caFile: directory + "/cert.pem")), host: "127.0.0.1")
        try Self.handshake(client: good, server: try TLSEngine(context: serverContext))

        let (staleContext, _, staleDirectory) = try Self.server(validFrom: -7200, validFor: 3600)
        defer { try? FileSystem.removeTree(staleDirectory) }
        let client = try TLSEngine(
            context: try TLSContext.client(TLSClientOptions(caFile: staleDirectory + "/cert.pem")), host: "localhost")
        do {
            try Self.handshake(client: client, server: try TLSEngine(context: staleContext))
            Issue.record("an expired certificate was accepted")
        } catch let error as TLSError {
            #expect(error.kind == .expiredCertificate, "\(error)")
        }
    }

    @Test("a client that gets plaintext back reports peerNotTLS")
    func plaintextPeer() throws {
        let client = try TLSEngine(context: try TLSContext.client(TLSClientOptions()), host: "localhost")
        _ = try client.handshake()
        Array("HK\u{1}\u{3}plaintext error frame".utf8).withUnsafeBytes { client.feed($0) }
        #expect {
            _ = try client.handshake()
        } throws: { ($0 as? TLSError)?.kind == .peerNotTLS }
    }

    @Test("fingerprints parse with or without colons, either case, or as openssl prints them; nothing else")
    func fingerprints() {
        let hex = "E4545EDA9EB5C7A360004621159523BB494869F3F095BDD28D38A9A180A6E681"
        let colons = stride(from: 0, to: 64, by: 2).map { i in
            String(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)])
        }.joined(separator: ":")
        let parsed = CertificateFingerprint(hex)
        #expect(parsed != nil)
        #expect(parsed?.description == colons)
        #expect(CertificateFingerprint(colons) == parsed)
        #expect(CertificateFingerprint(hex.lowercased()) == parsed)
        #expect(CertificateFingerprint("sha256 Fingerprint=\(colons)\n") == parsed)
        for bad in [
            "", "E4", String(hex.dropLast()), hex + "00", String(hex.dropLast()) + "G", colons + ":",
            "E:4" + hex.dropFirst(2),
        ] {
            #expect(CertificateFingerprint(bad) == nil, "\(bad)")
        }
    }
}

/// Untrusted bytes into the server's layer: garbage after a TLS-looking first byte, and records cut anywhere.
@Suite("TLS server layer")
struct TLSServerLayerTests {
    @Test("random bytes after 0x16 end in a failure or a wait for more, never a crash or plaintext for the handler")
    func garbage() throws {
        let (context, _, directory) = try TLSEngineTests.server()
        defer { try? FileSystem.removeTree(directory) }
        var random = SplitMix64(seed: 19)
        for _ in 0..<300 {
            let layer = try TLSServerLayer(context: context, plaintextRefusal: [1, 2, 3])
            var bytes =
                [UInt8(0x16)] + (0..<Int(random.next() % 600)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if random.next() % 2 == 0 { bytes.insert(contentsOf: [0x03, 0x01, 0x02, 0x00], at: 1) }  // a record header
            var output = StreamLayerOutput()
            bytes.withUnsafeBytes { layer.received($0, into: &output) }
            #expect(output.forHandler.isEmpty)
            #expect(output.forPeer != [1, 2, 3])
        }
    }

    @Test("a plaintext first byte gets the plaintext refusal and a failure; writes before the handshake wait")
    func plaintextClient() throws {
        let (context, _, directory) = try TLSEngineTests.server()
        defer { try? FileSystem.removeTree(directory) }
        let layer = try TLSServerLayer(context: context, plaintextRefusal: Array("no".utf8))
        var early = StreamLayerOutput()
        Array("refused early".utf8).withUnsafeBytes { layer.send($0, into: &early) }
        #expect(early.forPeer.isEmpty && early.failure == nil)
        var output = StreamLayerOutput()
        Array("HK\u{1}\u{1}".utf8).withUnsafeBytes { layer.received($0, into: &output) }
        #expect(output.forPeer == Array("no".utf8))
        #expect(output.failure?.contains("plaintext client") == true)
    }
}
