import COpenSSL

/// One side of a TLS connection over a pair of memory BIOs: ciphertext from the peer goes in with ``feed(_:)``,
/// ciphertext for the peer comes out of ``takeOutput(appendingTo:)``; the socket belongs to the caller, so a
/// non-blocking event loop and a blocking client drive the same code.
///
/// Threading: not thread-safe; one owner (a connection on its loop, or a client under its lock) at a time.
final class TLSEngine {
    private let context: TLSContext
    private let ssl: OpaquePointer
    /// Ciphertext from the peer, read by OpenSSL (owned by `ssl`).
    private let inbound: OpaquePointer
    /// Ciphertext for the peer, written by OpenSSL (owned by `ssl`).
    private let outbound: OpaquePointer
    /// The first bytes the peer sent (up to ``openingLimit``), kept until the handshake ends: a TLS peer's first
    /// byte is a record type (0x16 for its hello); a plaintext peer's are its answer, for the caller to read.
    private(set) var opening: [UInt8] = []
    /// How much of the peer's first bytes ``opening`` keeps.
    static let openingLimit = 4096
    /// The first byte the peer sent: a TLS peer's is a record type (0x16 for its hello).
    private(set) var firstByte: UInt8?
    /// Whether the handshake finished (and, on a client, the pin matched).
    private(set) var isEstablished = false
    /// Where `read` decrypts to, reused (a TLS record holds at most 16 KiB of plaintext).
    private var scratch = [UInt8](repeating: 0, count: 16 << 10)

    /// A session of `context`; a client checks the certificate against `host` unless the context pins it.
    init(context: TLSContext, host: String? = nil) throws(TLSError) {
        self.context = context
        guard let ssl = SSL_new(context.pointer) else { throw .openSSL(.configuration, "cannot create a TLS session") }
        guard let inbound = hk_BIO_new_mem(), let outbound = hk_BIO_new_mem() else {
            SSL_free(ssl)
            throw .openSSL(.configuration, "cannot create memory BIOs")
        }
        SSL_set_bio(ssl, inbound, outbound)
        self.ssl = ssl
        self.inbound = inbound
        self.outbound = outbound
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if let host { try expect(host: host) }
        }
    }

    deinit { SSL_free(ssl) }

    /// Sends SNI for a DNS name and, unless pinning alone is asked, checks the name (or IP address) against the
    /// certificate during the handshake.
    private func expect(host: String) throws(TLSError) {
        let isAddress = host.isIPAddressLiteral
        if !isAddress { _ = hk_SSL_set_tlsext_host_name(ssl, host) }
        guard context.verifiesHostname else { return }
        let ok =
            isAddress
            ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
            : SSL_set1_host(ssl, host) == 1
        if !ok { throw .openSSL(.configuration, "cannot check certificates against \"\(host)\"") }
    }

    /// Hands ciphertext from the peer to OpenSSL.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if firstByte == nil { firstByte = bytes[0] }
        if !isEstablished, opening.count < Self.openingLimit {
            opening.append(contentsOf: bytes.prefix(Self.openingLimit - opening.count))
        }
        var offset = 0
        while offset < bytes.count {
            let chunk = Int32(clamping: bytes.count - offset)
            let written = BIO_write(inbound, base + offset, chunk)
            if written <= 0 { return }  // A memory BIO only fails when memory does.
            offset += Int(written)
        }
    }

    /// Appends the ciphertext waiting for the peer to `bytes`.
    func takeOutput(appendingTo bytes: inout [UInt8]) {
        let pending = Int(BIO_ctrl_pending(outbound))
        guard pending > 0 else { return }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: pending))
        let read = bytes.withUnsafeMutableBytes { raw in
            BIO_read(outbound, raw.baseAddress! + start, Int32(clamping: pending))
        }
        bytes.removeLast(pending - max(Int(read), 0))
    }

    /// Whether ciphertext waits for the peer.
    var hasOutput: Bool { BIO_ctrl_pending(outbound) > 0 }

    /// Advances the handshake with what was fed; true once it is complete (then checks a client's pin).
    func handshake() throws(TLSError) -> Bool {
        if isEstablished { return true }
        let result = SSL_do_handshake(ssl)
        if result != 1 {
            let error = SSL_get_error(ssl, result)
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
                TLSError.drainErrorQueue()
                return false
            }
            throw failure("the TLS handshake failed")
        }
        if !context.isServer, let pin = context.pinnedFingerprint {
            let actual = peerFingerprint
            guard actual == pin else {
                throw TLSError(
                    .fingerprintMismatch,
                    "the server's certificate has the SHA-256 fingerprint \(actual.map { "\($0)" } ?? "(none)"), not the pinned \(pin)"
                )
            }
        }
        isEstablished = true
        opening = []
        return true
    }

    /// Decrypts every complete record fed so far, appending the plaintext to `bytes`. Returns false once the
    /// peer closed the TLS session (close_notify).
    func read(appendingTo bytes: inout [UInt8]) throws(TLSError) -> Bool {
        while true {
            let count = scratch.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                bytes.append(contentsOf: scratch[..<Int(count)])
                continue
            }
            let error = SSL_get_error(ssl, count)
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                TLSError.drainErrorQueue()
                return true
            case SSL_ERROR_ZERO_RETURN:
                return false
            default:
                throw failure("reading TLS records failed")
            }
        }
    }

    /// Encrypts `bytes` (after the handshake) into the output.
    func write(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = SSL_write(ssl, base + offset, Int32(clamping: min(bytes.count - offset, 1 << 30)))
            guard written > 0 else { throw failure("writing TLS records failed") }
            offset += Int(written)
        }
    }

    /// Encrypts `bytes` (after the handshake) into the output.
    func write(_ bytes: [UInt8]) throws(TLSError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(TLSError) in try write(raw) } }.get()
    }

    /// Queues close_notify (when the handshake finished).
    func close() {
        guard isEstablished else { return }
        _ = SSL_shutdown(ssl)
        TLSError.drainErrorQueue()
    }

    /// The SHA-256 fingerprint of the peer's certificate, if it sent one.
    var peerFingerprint: CertificateFingerprint? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return CertificateFingerprint.of(certificate)
    }

    /// The negotiated protocol, e.g. `TLSv1.3`.
    var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// Classifies a failed call: a certificate the verifier rejected, a peer that did not speak TLS, a
    /// certificate the peer refused, or another failure; the message carries OpenSSL's reasons.
    private func failure(_ context: String) -> TLSError {
        let reason = hk_ERR_GET_REASON(ERR_peek_last_error())
        let details = TLSError.drainErrorQueue()
        let verify = SSL_get_verify_result(ssl)
        let side = self.context.isServer ? "the client's" : "the server's"
        if verify != X509_V_OK {
            let why = String(cString: X509_verify_cert_error_string(verify))
            switch Int32(verify) {
            case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
                return TLSError(.expiredCertificate, "\(side) certificate is not valid now: \(why)")
            case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
                return TLSError(.hostnameMismatch, "\(side) certificate does not name the host connected to: \(why)")
            default:
                return TLSError(.untrustedCertificate, "\(side) certificate is not trusted: \(why)")
            }
        }
        if !self.context.isServer, let firstByte, !(20...23).contains(firstByte) {
            return TLSError(
                .peerNotTLS, "the server does not speak TLS (it answered in plaintext)", plaintextReply: opening)
        }
        // Alerts the peer sent about our certificate (reason = 1000 + alert number): bad_certificate 42,
        // unsupported 43, revoked 44, expired 45, unknown 46, unknown_ca 48, access_denied 49,
        // certificate_required 116.
        if [1042, 1043, 1044, 1045, 1046, 1048, 1049, 1116].contains(reason) {
            return TLSError(.certificateRefused, "\(context): the peer refused our certificate (\(details))")
        }
        return TLSError(.handshakeFailed, details.isEmpty ? context : "\(context): \(details)")
    }
}
