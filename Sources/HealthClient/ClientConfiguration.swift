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
    /// How every call (inserts, queries, administration, connecting, a subscription's first subscribe) retries
    /// retryable errors: jittered exponential backoff within a time budget that outlasts a restart of hkd.
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
