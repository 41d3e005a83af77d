import COpenSSL

/// A certificate's SHA-256 fingerprint: the digest of its DER encoding, as `openssl x509 -fingerprint -sha256`
/// prints it (`AB:CD:…`, 32 colon-separated upper-case hex pairs).
public struct CertificateFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// A fingerprint of exactly 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Parses 64 hex digits, with or without colons between the pairs, in either case; also accepts the whole
    /// line `openssl x509 -fingerprint` prints (`sha256 Fingerprint=…`). Nil for anything else.
    public init?(_ text: String) {
        var hex = Substring(text.trimmingSpaces)
        if let equals = hex.lastIndex(of: "=") { hex = hex[hex.index(after: equals)...] }
        let digits = hex.filter { $0 != ":" }
        guard digits.count == 64, hex.count == 64 || hex.count == 95 else { return nil }
        if hex.count == 95 {
            // Colon-separated: every third character is a colon.
            for (index, character) in hex.enumerated() where index % 3 == 2 && character != ":" { return nil }
        }
        var bytes: [UInt8] = []
        var iterator = digits.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = high.hexDigitValue, let l = low.hexDigitValue else { return nil }
            bytes.append(UInt8(h << 4 | l))
        }
        self.init(bytes: bytes)
    }

    /// `AB:CD:…`, as `openssl x509 -fingerprint -sha256` prints it.
    public var description: String {
        bytes.map { byte in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined(separator: ":")
    }

    /// The fingerprint of a certificate (an `X509 *`).
    static func of(_ certificate: OpaquePointer) -> CertificateFingerprint? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { return nil }
        return CertificateFingerprint(bytes: Array(digest.prefix(Int(length))))
    }

    /// The fingerprint of the first certificate in a PEM file.
    public static func ofCertificateFile(_ path: String) throws(TLSError) -> CertificateFingerprint {
        guard let bio = BIO_new_file(path, "r") else {
            throw .openSSL(.configuration, "cannot read the certificate file \(path)")
        }
        defer { BIO_free(bio) }
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else {
            throw .openSSL(.configuration, "\(path) holds no PEM certificate")
        }
        defer { X509_free(certificate) }
        guard let fingerprint = of(certificate) else {
            throw .openSSL(.configuration, "cannot compute the fingerprint of \(path)")
        }
        return fingerprint
    }
}

extension String {
    /// Whether this is an IPv4 or IPv6 literal rather than a DNS name (certificates name them differently).
    var isIPAddressLiteral: Bool { contains(":") || (!isEmpty && allSatisfy { $0.isNumber || $0 == "." }) }

    /// Without leading and trailing spaces, tabs and line breaks (no Foundation here).
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
