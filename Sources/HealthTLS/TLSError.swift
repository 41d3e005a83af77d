import COpenSSL

/// Why a TLS connection or a TLS set-up failed, with a message that names the culprit.
///
/// The client library maps each ``Kind`` to a protocol error code (Protocol/PROTOCOL.md, "TLS").
public struct TLSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Hashable, Sendable {
        /// The peer's certificate does not chain to a trusted authority (or is self-signed and not pinned).
        case untrustedCertificate
        /// The peer's certificate is expired or not yet valid.
        case expiredCertificate
        /// The peer's certificate does not name the host that was connected to.
        case hostnameMismatch
        /// The peer's certificate is not the pinned one.
        case fingerprintMismatch
        /// TLS was asked for and the peer answered in plaintext (not a TLS record).
        case peerNotTLS
        /// The peer refused our certificate, or wanted one and got none (mutual TLS).
        case certificateRefused
        /// Another handshake or record failure (a protocol version, an alert, a corrupt record).
        case handshakeFailed
        /// A certificate, key or CA file could not be used, or OpenSSL could not set up.
        case configuration
    }

    /// What went wrong.
    public let kind: Kind
    /// One line naming the problem.
    public let message: String
    /// For ``Kind/peerNotTLS``: the first bytes the peer answered in plaintext (at most 4 KiB), which may be an
    /// error frame of the protocol saying why.
    public let plaintextReply: [UInt8]

    /// An error of `kind`.
    public init(_ kind: Kind, _ message: String, plaintextReply: [UInt8] = []) {
        self.kind = kind
        self.message = message
        self.plaintextReply = plaintextReply
    }

    /// The message.
    public var description: String { message }

    /// An error of `kind` whose message is `context` followed by OpenSSL's queued errors (which it clears).
    static func openSSL(_ kind: Kind, _ context: String) -> TLSError {
        let details = drainErrorQueue()
        return TLSError(kind, details.isEmpty ? context : "\(context): \(details)")
    }

    /// The thread's queued OpenSSL errors as one line, clearing the queue.
    @discardableResult
    static func drainErrorQueue() -> String {
        var lines: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            lines.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return lines.joined(separator: "; ")
    }
}
