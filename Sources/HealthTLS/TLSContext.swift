import COpenSSL

/// An OpenSSL `SSL_CTX`: certificates, keys, trust and protocol versions (TLS 1.2 at least, 1.3 preferred),
/// configured once and then only read. Every connection makes its own session from it (`SSL_new`), which
/// OpenSSL allows from any thread; nothing in the context changes after `init`, hence `@unchecked Sendable`.
public final class TLSContext: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Whether sessions of this context are the server side.
    let isServer: Bool
    /// A client's pinned server certificate, checked after each handshake.
    let pinnedFingerprint: CertificateFingerprint?
    /// Whether a client checks the host name against the certificate (not when only a pin is given).
    let verifiesHostname: Bool

    private init(server: Bool, pinned: CertificateFingerprint? = nil, verifiesHostname: Bool = false)
        throws(TLSError)
    {
        guard let context = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw .openSSL(.configuration, "cannot create a TLS context")
        }
        pointer = context
        isServer = server
        pinnedFingerprint = pinned
        self.verifiesHostname = verifiesHostname
        guard hk_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw .openSSL(.configuration, "cannot require TLS 1.2")
        }
        // No session resumption (PROTOCOL.md): connections are long-lived, and no session state is kept. The
        // session cache is off, TLS 1.2 tickets are off (SSL_OP_NO_TICKET), TLS 1.3 issues none.
        _ = hk_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
        hk_SSL_CTX_disable_tickets(context)
        _ = SSL_CTX_set_num_tickets(context, 0)
    }

    deinit { SSL_CTX_free(pointer) }

    /// A server context with the certificate chain and key of two PEM files; with `clientCAFile`, clients must
    /// present a certificate signed by one of its authorities (mutual TLS).
    public static func server(certificateFile: String, keyFile: String, clientCAFile: String? = nil)
        throws(TLSError) -> TLSContext
    {
        let context = try TLSContext(server: true)
        try context.useCertificate(certificateFile, key: keyFile)
        if let clientCAFile {
            guard SSL_CTX_load_verify_locations(context.pointer, clientCAFile, nil) == 1,
                let names = SSL_load_client_CA_file(clientCAFile)
            else {
                throw .openSSL(.configuration, "cannot load the client CA file \(clientCAFile)")
            }
            SSL_CTX_set_client_CA_list(context.pointer, names)
            SSL_CTX_set_verify(context.pointer, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        return context
    }

    /// A client context for `options`: the server's certificate is checked against the CA file (or the
    /// system's authorities), its host name against the name connected to, and its fingerprint against a pin.
    /// With a pin and no CA file, the pin alone identifies the server (for self-signed certificates).
    public static func client(_ options: TLSClientOptions) throws(TLSError) -> TLSContext {
        let pinOnly = options.fingerprint != nil && options.caFile == nil
        let context = try TLSContext(server: false, pinned: options.fingerprint, verifiesHostname: !pinOnly)
        if pinOnly {
            SSL_CTX_set_verify(context.pointer, SSL_VERIFY_NONE, nil)
        } else {
            SSL_CTX_set_verify(context.pointer, SSL_VERIFY_PEER, nil)
            if let caFile = options.caFile {
                guard SSL_CTX_load_verify_locations(context.pointer, caFile, nil) == 1 else {
                    throw .openSSL(.configuration, "cannot load the CA file \(caFile)")
                }
            } else if SSL_CTX_set_default_verify_paths(context.pointer) != 1 {
                throw .openSSL(.configuration, "cannot load the system's certificate authorities")
            }
        }
        switch (options.certificateFile, options.keyFile) {
        case (let certificate?, let key?): try context.useCertificate(certificate, key: key)
        case (nil, nil): break
        default: throw TLSError(.configuration, "a client certificate needs both its certificate and its key file")
        }
        return context
    }

    private func useCertificate(_ certificateFile: String, key keyFile: String) throws(TLSError) {
        guard SSL_CTX_use_certificate_chain_file(pointer, certificateFile) == 1 else {
            throw .openSSL(.configuration, "cannot use the certificate file \(certificateFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(pointer, keyFile, SSL_FILETYPE_PEM) == 1 else {
            throw .openSSL(.configuration, "cannot use the key file \(keyFile)")
        }
        guard SSL_CTX_check_private_key(pointer) == 1 else {
            throw .openSSL(.configuration, "the key \(keyFile) does not belong to the certificate \(certificateFile)")
        }
    }
}

/// How a client checks the server and what it presents: trust, pinning, a client certificate for mutual TLS.
public struct TLSClientOptions: Hashable, Sendable {
    /// PEM file of the authorities to trust; nil: the system's (`/etc/ssl/certs`).
    public var caFile: String?
    /// The server certificate's SHA-256 fingerprint; with no ``caFile`` the pin replaces chain and host-name
    /// checks (the self-signed case), with one both must pass.
    public var fingerprint: CertificateFingerprint?
    /// PEM certificate (chain) presented to a server that asks (mutual TLS); needs ``keyFile``.
    public var certificateFile: String?
    /// PEM private key of ``certificateFile``.
    public var keyFile: String?

    /// Options; the defaults verify against the system's authorities and present no certificate.
    public init(
        caFile: String? = nil, fingerprint: CertificateFingerprint? = nil, certificateFile: String? = nil,
        keyFile: String? = nil
    ) {
        self.caFile = caFile
        self.fingerprint = fingerprint
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}
