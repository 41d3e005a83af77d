// Monotonic deadlines for timeout-aware blocking calls and timers.

/// A point on the monotonic clock, in nanoseconds; `.distantFuture` never expires.
public struct Deadline: Comparable, Hashable, Sendable {
    /// Nanoseconds of CLOCK_MONOTONIC.
    public let nanoseconds: UInt64

    /// The deadline at `nanoseconds` on the monotonic clock.
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The current instant.
    public static func now() -> Deadline { Deadline(nanoseconds: Sys.monotonicNanoseconds()) }

    /// A deadline that never expires.
    public static let distantFuture = Deadline(nanoseconds: .max)

    /// `duration` from now; nil (no timeout) gives `.distantFuture`, negative durations give now.
    public static func after(_ duration: Duration?) -> Deadline {
        guard let duration else { return .distantFuture }
        let now = Sys.monotonicNanoseconds()
        let (sum, overflow) = now.addingReportingOverflow(duration.clampedNanoseconds)
        return Deadline(nanoseconds: overflow ? .max : sum)
    }

    /// Whether the deadline has passed.
    public var hasExpired: Bool { self != .distantFuture && Sys.monotonicNanoseconds() >= nanoseconds }

    /// The time left, for a call that takes a timeout: nil for `.distantFuture`, zero once expired.
    public var remaining: Duration? {
        if self == .distantFuture { return nil }
        let now = Sys.monotonicNanoseconds()
        return nanoseconds > now ? .nanoseconds(Int64(clamping: nanoseconds - now)) : .zero
    }

    /// Milliseconds left, rounded up, as a poll/epoll timeout: -1 for `.distantFuture`, 0 when expired.
    var pollTimeoutMilliseconds: Int32 {
        if self == .distantFuture { return -1 }
        let now = Sys.monotonicNanoseconds()
        guard nanoseconds > now else { return 0 }
        let milliseconds = (nanoseconds - now + 999_999) / 1_000_000
        return Int32(clamping: milliseconds)
    }

    /// Earlier deadlines order first.
    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to 0...UInt64.max.
    var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (sum, overflow2) = whole.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return overflow2 ? .max : sum
    }
}
