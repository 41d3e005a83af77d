import COpenSSL
import HealthPosix

/// A self-signed certificate and its key, made with OpenSSL's C API (an EC P-256 key, SHA-256 signature), as
/// PEM text: what `hkd --tls auto` serves, and what tests make certificates with.
public struct SelfSignedCertificate: Sendable {
    /// The certificate, PEM.
    public let certificatePEM: [UInt8]
    /// The private key, PEM (PKCS #8, unencrypted).
    public let keyPEM: [UInt8]
    /// The certificate's SHA-256 fingerprint.
    public let fingerprint: CertificateFingerprint

    /// Makes a key and a certificate for `commonName` naming `dnsNames` and `ipAddresses` (subjectAltName),
    /// valid from `validFrom` seconds relative to now (negative: in the past) for `validFor` seconds.
    public static func generate(
        commonName: String, dnsNames: [String], ipAddresses: [String], validFrom: Int = -3600,
        validFor: Int = 10 * 366 * 86_400
    ) throws(TLSError) -> SelfSignedCertificate {
        guard let key = hk_EVP_EC_gen_P256() else { throw .openSSL(.configuration, "cannot generate a P-256 key") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw .openSSL(.configuration, "cannot create a certificate") }
        defer { X509_free(certificate) }
        var serial: [UInt8]
        do {
            serial = try SecureRandom.bytes(16)
        } catch {
            throw TLSError(.configuration, "cannot draw a serial number: \(error)")
        }
        serial[0] &= 0x7f  // positive
        let serialNumber = BN_bin2bn(serial, Int32(serial.count), nil)
        defer { BN_free(serialNumber) }
        let names =
            dnsNames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }
        guard X509_set_version(certificate, 2) == 1,
            BN_to_ASN1_INTEGER(serialNumber, X509_get_serialNumber(certificate)) != nil,
            X509_gmtime_adj(X509_getm_notBefore(certificate), validFrom) != nil,
            X509_gmtime_adj(X509_getm_notAfter(certificate), validFrom + validFor) != nil,
            X509_set_pubkey(certificate, key) == 1,
            let subject = X509_get_subject_name(certificate),
            X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1,
            X509_set_issuer_name(certificate, subject) == 1,
            hk_X509_add_self_extension(certificate, NID_basic_constraints, "critical,CA:FALSE") == 1,
            hk_X509_add_self_extension(certificate, NID_key_usage, "critical,digitalSignature") == 1,
            hk_X509_add_self_extension(certificate, NID_ext_key_usage, "serverAuth,clientAuth") == 1,
            hk_X509_add_self_extension(certificate, NID_subject_key_identifier, "hash") == 1,
            names.isEmpty
                || hk_X509_add_self_extension(certificate, NID_subject_alt_name, names.joined(separator: ",")) == 1,
            X509_sign(certificate, key, EVP_sha256()) > 0
        else {
            throw .openSSL(.configuration, "cannot make a self-signed certificate")
        }
        guard let fingerprint = CertificateFingerprint.of(certificate) else {
            throw .openSSL(.configuration, "cannot compute the certificate's fingerprint")
        }
        let certificatePEM = try pem { PEM_write_bio_X509($0, certificate) }
        let keyPEM = try pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
        return SelfSignedCertificate(certificatePEM: certificatePEM, keyPEM: keyPEM, fingerprint: fingerprint)
    }

    /// What `write` puts into a memory BIO.
    private static func pem(_ write: (OpaquePointer) -> Int32) throws(TLSError) -> [UInt8] {
        guard let bio = hk_BIO_new_mem() else { throw .openSSL(.configuration, "cannot create a memory BIO") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw .openSSL(.configuration, "cannot write PEM") }
        var bytes = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        let read = bytes.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
        return Array(bytes.prefix(Int(max(read, 0))))
    }

    /// Writes the key and the certificate atomically, both mode 0600.
    public func write(certificateTo certificatePath: String, keyTo keyPath: String) throws {
        try FileSystem.writeFileAtomically(keyPath, keyPEM, permissions: 0o600)
        try FileSystem.writeFileAtomically(certificatePath, certificatePEM, permissions: 0o600)
    }
}
