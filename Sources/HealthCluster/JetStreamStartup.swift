import Foundation
import HealthModel

/// How a node waits for JetStream when it starts: NATS servers still starting, a NATS cluster still electing its
/// metadata leader or short of servers for the replicas asked do not stop it. Each failure to reach JetStream
/// is logged (`waiting for JetStream at URLS: …; retrying in …`) and the step is tried again after a pause that
/// doubles from ``firstPause`` up to ``longestPause``, for as long as it takes, in whatever order the servers
/// and the nodes start.
public struct JetStreamStartup: Sendable {
    /// The NATS servers, comma-separated `nats://host:port`.
    public var urls: String
    /// Waits the given time between attempts; returns `false` when the node is to stop instead (hkd: SIGTERM or
    /// SIGINT arrived).
    public var pause: @Sendable (Duration) -> Bool
    /// Where the waiting is logged.
    public var logLine: @Sendable (String) -> Void
    /// The pause after the first failure.
    public var firstPause: Duration = .milliseconds(250)
    /// The longest pause.
    public var longestPause: Duration = .seconds(5)

    /// Waiting for `urls`, logging to `logLine`, pausing with `pause`.
    public init(
        urls: String, pause: @escaping @Sendable (Duration) -> Bool = sleep,
        logLine: @escaping @Sendable (String) -> Void
    ) {
        self.urls = urls
        self.pause = pause
        self.logLine = logLine
    }

    /// The pause that sleeps the whole time and never stops the waiting.
    public static let sleep: @Sendable (Duration) -> Bool = { pause in
        Thread.sleep(forTimeInterval: Double(pause.milliseconds) / 1000)
        return true
    }

    /// Connects to the NATS servers and returns once JetStream answers (``JetStream/checkReady()``).
    public func connect() throws -> JetStream {
        let jetStream = try retrying { try JetStream(urls: urls) }
        try retrying { try jetStream.checkReady() }
        return jetStream
    }

    /// Runs `body` until it does not fail to reach JetStream (a ``NATSFailure``), pausing between attempts;
    /// throws any other error at once, and ``ErrorCode/shuttingDown`` when ``pause`` says to stop.
    public func retrying<T>(_ body: () throws -> T) throws -> T {
        var delay = firstPause
        while true {
            do {
                return try body()
            } catch let failure as NATSFailure {
                logLine(
                    "waiting for JetStream at \(urls): \(failure); retrying in "
                        + String(format: "%.2g s", Double(delay.milliseconds) / 1000))
                guard pause(delay) else {
                    throw HealthError(.shuttingDown, "stopped while waiting for JetStream at \(urls)")
                }
                delay = min(delay * 2, longestPause)
            }
        }
    }
}
