import HealthTLS

/// Where and how a client connects.
///
/// A value: copy and modify it freely; a ``HealthClient`` keeps the copy it was created with.
public struct ClientConfiguration: Hashable, Sendable {
    /// The server's host name or address.
    public var host: String
    /// The server's TCP port (hkd listens on 7420 by default).
    public var port: Int
    /// The identity's token; empty for none. It is never sent: the handshake proves knowledge of it, and the
    /// connection fails with ``HealthModel/ErrorCode/serverUnverified`` when the server cannot prove that it
    /// holds the token's verifier (Protocol/PROTOCOL.md "Authentication").
    public var token: String
    /// Sent in the hello, for the server's logs.
    public var clientName: String
    /// How long connecting and the handshake may take before failing with ``HealthModel/ErrorCode/timedOut``.
    public var connectTimeout: Duration
    /// How long a request may wait for its reply before failing with ``HealthModel/ErrorCode/timedOut``.
    public var requestTimeout: Duration
    /// How requests (inserts, queries, administration) retry retryable errors: a bounded number of attempts.
    public var retry: RetryPolicy
    /// How live subscriptions reconnect after a lost connection: for as long as their stream is iterated.
    public var reconnect: ReconnectPolicy
    /// TLS: nil speaks plaintext; otherwise every connection (reconnections too) runs TLS first, checking the
    /// server's certificate (against ``TLSClientOptions/caFile`` or the system's authorities and the host name,
    /// or against a pinned fingerprint) and failing with the TLS codes of Protocol/PROTOCOL.md.
    public var tls: TLSClientOptions?
    /// While a connection holds live subscriptions and the server has sent nothing for this long, the client
    /// pings it; with nothing for twice as long the connection counts as lost and the subscriptions reconnect
    /// (a half-open TCP connection after a network change, a frozen server). `nil`: never. Checked once a
    /// second, so values under a second act as one second.
    public var heartbeat: Duration?
    /// Whether request payloads of 512 bytes or more are deflated (Protocol/PROTOCOL.md, "Compression"), as by
    /// default. `false` suits a loopback connection, where carrying the bytes costs nothing and deflating them
    /// costs both ends CPU time (a 10,000-row insert with its UUIDs barely shrinks); hkq sets it so for a loopback
    /// host. A payload too large for the server's frame limit uncompressed is deflated anyway.
    public var compressesRequests = true

    /// Whether `host` names this machine's loopback interface (`localhost`, `::1`, `127.x.x.x`).
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// A configuration; every parameter has the default of a local hkd without authentication.
    public init(
        host: String = "127.0.0.1", port: Int = 7420, token: String = "", clientName: String = "HealthClient",
        connectTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(60),
        retry: RetryPolicy = .standard,
        reconnect: ReconnectPolicy = .standard, tls: TLSClientOptions? = nil, heartbeat: Duration? = .seconds(15)
    ) {
        self.tls = tls
        self.heartbeat = heartbeat
        self.host = host
        self.port = port
        self.token = token
        self.clientName = clientName
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.retry = retry
        self.reconnect = reconnect
    }
}

/// Retries of a request after retryable errors (busy, storage unavailable, connection lost, timeout):
/// exponential backoff without jitter, a bounded number of attempts, then the last error is thrown. An insert is
/// re-sent with the same batch id, so a retry never stores a batch twice. Subscriptions reconnect under
/// ``ReconnectPolicy`` instead, without limit.
public struct RetryPolicy: Hashable, Sendable {
    /// Attempts in all, the first one included; 1 means no retry.
    public var maxAttempts: Int
    /// The pause before the first retry; it doubles before each further retry.
    public var initialBackoff: Duration
    /// The longest pause between two attempts.
    public var maxBackoff: Duration

    /// A policy.
    public init(maxAttempts: Int, initialBackoff: Duration, maxBackoff: Duration) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    /// Six attempts, with pauses of 50, 100, 200, 400 and 800 ms between them: 1.55 s of pauses in all (the
    /// 2 s cap is never reached), so a request rides out a server restart of about 1.5 s and no longer (each
    /// attempt also costs its connect or request time: a refused connect returns at once).
    public static let standard = RetryPolicy(maxAttempts: 6, initialBackoff: .milliseconds(50), maxBackoff: .seconds(2))
    /// One attempt, no retry.
    public static let none = RetryPolicy(maxAttempts: 1, initialBackoff: .zero, maxBackoff: .zero)

    /// The sum of every pause between the attempts: how long retrying can wait in all, attempts' own time aside
    /// (1.55 s for ``standard``).
    public var totalBackoff: Duration {
        (1..<max(maxAttempts, 1)).reduce(Duration.zero) { total, retry in total + backoff(beforeAttempt: retry + 1) }
    }

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
