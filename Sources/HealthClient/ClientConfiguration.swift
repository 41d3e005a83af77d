/// Where and how a client connects.
public struct ClientConfiguration: Hashable, Sendable {
    public var host: String
    public var port: Int
    /// The identity's token; empty for none. It is never sent: the handshake proves knowledge of it, and the
    /// connection fails with ``HealthModel/ErrorCode/serverUnverified`` when the server cannot prove that it
    /// holds the token's verifier (Protocol/PROTOCOL.md "Authentication").
    public var token: String
    /// Sent in the hello, for the server's logs.
    public var clientName: String
    public var connectTimeout: Duration
    /// How long a request may wait for its reply before failing with ``HealthModel/ErrorCode/timedOut``.
    public var requestTimeout: Duration
    /// How insert and query retries behave after retryable errors.
    public var retry: RetryPolicy

    public init(
        host: String = "127.0.0.1", port: Int = 7420, token: String = "", clientName: String = "HealthClient",
        connectTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(60), retry: RetryPolicy = .standard
    ) {
        self.host = host
        self.port = port
        self.token = token
        self.clientName = clientName
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.retry = retry
    }
}

/// Retries of retryable errors (busy, storage unavailable, connection lost, timeout): exponential backoff.
public struct RetryPolicy: Hashable, Sendable {
    /// Attempts in all, the first one included; 1 means no retry.
    public var maxAttempts: Int
    public var initialBackoff: Duration
    public var maxBackoff: Duration

    public init(maxAttempts: Int, initialBackoff: Duration, maxBackoff: Duration) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    /// Six attempts, 50 ms doubling up to 2 s (about 4 s of retrying in all).
    public static let standard = RetryPolicy(maxAttempts: 6, initialBackoff: .milliseconds(50), maxBackoff: .seconds(2))
    public static let none = RetryPolicy(maxAttempts: 1, initialBackoff: .zero, maxBackoff: .zero)

    /// The pause before attempt `attempt` (2 for the first retry).
    func backoff(beforeAttempt attempt: Int) -> Duration {
        var delay = initialBackoff
        for _ in 2..<max(attempt, 2) {
            delay = delay * 2
            if delay >= maxBackoff { return maxBackoff }
        }
        return min(delay, maxBackoff)
    }
}
