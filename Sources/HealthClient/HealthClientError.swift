import HealthModel

/// An error from the client library, typed by origin: the server refused the request (with its code), or the
/// problem arose on this side (connection lost, timeout, invalid input caught before sending).
public struct HealthClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where the error arose.
    public enum Origin: Hashable, Sendable {
        /// The server answered with an error frame.
        case server
        /// The client detected it (connection, timeout, local validation).
        case local
    }

    /// Where it arose.
    public var origin: Origin
    /// Its code and message (the server's own, for ``Origin/server``).
    public var error: HealthError

    /// An error of `origin`.
    public init(_ origin: Origin, _ error: HealthError) {
        self.origin = origin
        self.error = error
    }

    /// A local error with a code and message.
    public static func local(_ code: ErrorCode, _ message: String) -> HealthClientError {
        HealthClientError(.local, HealthError(code, message))
    }

    /// The stable code: decide on retrying from it (or ``isRetryable``), never from the message.
    public var code: ErrorCode { error.code }
    /// One line naming the problem.
    public var message: String { error.message }

    /// Whether sending the same request again can succeed.
    public var isRetryable: Bool { error.code.isRetryable }

    /// `server error 301 forbidden: …` or `… (connectionLost)`.
    public var description: String {
        switch origin {
        case .server: "server error \(error.code.rawValue) \(error.code.name): \(error.message)"
        case .local: "\(error.message) (\(error.code.name))"
        }
    }
}
