import HealthModel
import HealthTLS

extension HealthClientError {
    /// The local error for a TLS failure, with its protocol code (Protocol/PROTOCOL.md, "TLS") and a hint.
    init(tlsError: TLSError, _ configuration: ClientConfiguration) {
        let server = "\(configuration.host):\(configuration.port)"
        let (code, hint): (ErrorCode, String) =
            switch tlsError.kind {
            case .untrustedCertificate:
                (
                    .certificateUntrusted,
                    "; trust its authority with --tls-ca FILE, or pin a self-signed certificate with --tls-fingerprint"
                )
            case .expiredCertificate: (.certificateExpired, "")
            case .hostnameMismatch: (.hostnameMismatch, "; connect by a name the certificate lists")
            case .fingerprintMismatch: (.fingerprintMismatch, "")
            case .certificateRefused:
                (.certificateRefused, "; the server wants a client certificate it trusts (--tls-cert and --tls-key)")
            case .peerNotTLS: (.tlsUnavailable, "; connect without --tls")
            case .handshakeFailed: (.tlsFailed, "")
            case .configuration: (.invalidArgument, "")
            }
        self = .local(code, "TLS with \(server): \(tlsError.message)\(hint)")
    }
}
