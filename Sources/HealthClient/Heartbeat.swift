/// When a connection with live subscriptions should ping the server, and when its silence means the connection
/// is gone (``ClientConfiguration/heartbeat``). A value inside ``ClientConnectionStateMachine``; time is passed in.
struct Heartbeat {
    /// What the reader should do after a quiet second.
    enum Decision: Equatable {
        /// Nothing: the server was heard recently, or nothing needs the connection to be alive.
        case quiet
        /// Ping the server (once per silence).
        case ping
        /// Give the connection up: the server has been silent this long, a ping included.
        case lost(Duration)
    }

    /// The silence before a ping; `nil` never pings.
    let interval: Duration?
    private var lastHeard: ContinuousClock.Instant
    private var pinged = false

    init(interval: Duration?, now: ContinuousClock.Instant) {
        self.interval = interval
        lastHeard = now
    }

    /// When ``check(now:subscribed:)`` next has something to decide for a connection holding subscriptions: the
    /// ping, or after it the loss; `nil` without an interval.
    var deadline: ContinuousClock.Instant? {
        guard let interval else { return nil }
        return lastHeard + (pinged ? interval * 2 : interval)
    }

    /// Bytes arrived from the server at `now`.
    mutating func heard(at now: ContinuousClock.Instant) {
        lastHeard = now
        pinged = false
    }

    /// The decision at `now`, for a connection that does (`subscribed`) or does not hold subscriptions: without
    /// any, silence is the server's business (its idle timeout), and the clock restarts.
    mutating func check(now: ContinuousClock.Instant, subscribed: Bool) -> Decision {
        guard let interval, subscribed else {
            heard(at: now)
            return .quiet
        }
        let silence = now - lastHeard
        if silence >= interval * 2 { return .lost(silence) }
        if silence >= interval, !pinged {
            pinged = true
            return .ping
        }
        return .quiet
    }
}
