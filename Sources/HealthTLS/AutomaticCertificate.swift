import HealthPosix

/// The certificate `hkd --tls auto` serves: made on the first start in the data directory, reused afterwards;
/// in cluster mode one certificate for every node, kept by the cluster and copied into each data directory.
public struct AutomaticCertificate: Sendable {
    /// The certificate's name in the data directory.
    public static let certificateFileName = "tls-certificate.pem"
    /// The key's name in the data directory (mode 0600).
    public static let keyFileName = "tls-key.pem"

    /// The certificate file, `DIR/tls-certificate.pem`.
    public let certificateFile: String
    /// The key file, `DIR/tls-key.pem` (mode 0600).
    public let keyFile: String
    /// The certificate's SHA-256 fingerprint (what clients pin).
    public let fingerprint: CertificateFingerprint
    /// Whether this start made the certificate.
    public let created: Bool

    /// The certificate of `directory`, made now if either file is missing. It names `localhost`, the host's
    /// name and the loopback addresses, plus `listenHost` when it is a specific address.
    public static func ensure(in directory: String, hostName: String, listenHost: String) throws
        -> AutomaticCertificate
    {
        let certificateFile = directory + "/" + certificateFileName
        let keyFile = directory + "/" + keyFileName
        if try FileSystem.exists(certificateFile), try FileSystem.exists(keyFile) {
            return AutomaticCertificate(
                certificateFile: certificateFile, keyFile: keyFile,
                fingerprint: try CertificateFingerprint.ofCertificateFile(certificateFile), created: false)
        }
        let made = try generate(hostName: hostName, listenHost: listenHost)
        try made.write(certificateTo: certificateFile, keyTo: keyFile)
        return AutomaticCertificate(
            certificateFile: certificateFile, keyFile: keyFile, fingerprint: made.fingerprint, created: true)
    }

    /// A new certificate naming `localhost`, `hostName`, the loopback addresses and `listenHost` when it is a
    /// specific address or name.
    public static func generate(hostName: String, listenHost: String) throws -> SelfSignedCertificate {
        var dnsNames = ["localhost"]
        var addresses = ["127.0.0.1", "::1"]
        if !hostName.isEmpty, hostName != "localhost" { dnsNames.append(hostName) }
        let isAddress = listenHost.isIPAddressLiteral
        if isAddress, !["0.0.0.0", "::", "127.0.0.1", "::1"].contains(listenHost) {
            addresses.append(listenHost)
        } else if !isAddress, !listenHost.isEmpty, listenHost != "*", !dnsNames.contains(listenHost) {
            dnsNames.append(listenHost)
        }
        return try SelfSignedCertificate.generate(
            commonName: hostName.isEmpty ? "hkd" : hostName, dnsNames: dnsNames, ipAddresses: addresses)
    }

    /// The certificate and the key in one PEM text (the certificate first), as a cluster keeps them.
    public static func combinedPEM(_ certificate: SelfSignedCertificate) -> [UInt8] {
        certificate.certificatePEM + certificate.keyPEM
    }

    /// Writes `combined` (``combinedPEM(_:)``: a certificate, then its private key) into `directory` as the
    /// certificate and key files (the key mode 0600), unless they hold it already. `created` is passed through
    /// for the log. Throws for a text that is not a certificate followed by a private key.
    public static func install(combinedPEM combined: [UInt8], in directory: String, created: Bool) throws
        -> AutomaticCertificate
    {
        guard let split = Self.keyStart(in: combined), split > 0 else {
            throw TLSError(.configuration, "the shared certificate is not a PEM certificate followed by its key")
        }
        let certificatePEM = Array(combined[..<split])
        let keyPEM = Array(combined[split...])
        let certificateFile = directory + "/" + certificateFileName
        let keyFile = directory + "/" + keyFileName
        let unchanged =
            (try? FileSystem.readFile(certificateFile)) == certificatePEM
            && (try? FileSystem.readFile(keyFile)) == keyPEM
        if !unchanged {
            try FileSystem.writeFileAtomically(keyFile, keyPEM, permissions: 0o600)
            try FileSystem.writeFileAtomically(certificateFile, certificatePEM, permissions: 0o600)
        }
        return AutomaticCertificate(
            certificateFile: certificateFile, keyFile: keyFile,
            fingerprint: try CertificateFingerprint.ofCertificateFile(certificateFile), created: created)
    }

    /// Where the private key's PEM block begins in `pem`.
    private static func keyStart(in pem: [UInt8]) -> Int? {
        for marker in ["-----BEGIN PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----"] {
            let needle = Array(marker.utf8)
            guard pem.count >= needle.count else { continue }
            for offset in 0...(pem.count - needle.count) where pem[offset] == needle[0] {
                if pem[offset..<(offset + needle.count)].elementsEqual(needle) { return offset }
            }
        }
        return nil
    }
}
