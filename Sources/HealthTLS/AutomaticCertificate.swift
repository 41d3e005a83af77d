import HealthPosix

/// The certificate `hkd --tls auto` serves: made on the first start in the data directory, reused afterwards.
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
        var dnsNames = ["localhost"]
        var addresses = ["127.0.0.1", "::1"]
        if !hostName.isEmpty, hostName != "localhost" { dnsNames.append(hostName) }
        let isAddress = listenHost.isIPAddressLiteral
        if isAddress, !["0.0.0.0", "::", "127.0.0.1", "::1"].contains(listenHost) {
            addresses.append(listenHost)
        } else if !isAddress, !listenHost.isEmpty, listenHost != "*", !dnsNames.contains(listenHost) {
            dnsNames.append(listenHost)
        }
        let made = try SelfSignedCertificate.generate(
            commonName: hostName.isEmpty ? "hkd" : hostName, dnsNames: dnsNames, ipAddresses: addresses)
        try made.write(certificateTo: certificateFile, keyTo: keyFile)
        return AutomaticCertificate(
            certificateFile: certificateFile, keyFile: keyFile, fingerprint: made.fingerprint, created: true)
    }
}
