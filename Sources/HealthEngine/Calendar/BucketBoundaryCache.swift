import HealthModel
import Synchronization

/// Boundaries of one calendar kept between calls: a window of consecutive buckets that grows to cover what is
/// asked, so a live collection walks its calendar once per window, not once per change or per sample.
///
/// Answers exactly what ``BucketCalendar/boundaries(from:to:maximumBucketCount:)`` answers (a bucket's start
/// depends only on its number). Bound to the calendar it first serves; a call with a different calendar (anchor,
/// interval or zone) starts a new window. Thread-safe (a mutex around the window, never held while computing);
/// the window holds at most ``windowLimit`` buckets.
public final class BucketBoundaryCache: Sendable {
    /// Most buckets the window keeps; wider requests are computed without being kept.
    public static let windowLimit = 20_000
    /// Buckets added beyond the request when the window grows, so a series growing bucket by bucket recomputes
    /// the window only every so many buckets.
    static let growthMargin = 64

    private struct Window: Sendable {
        var anchor: Timestamp
        var interval: CalendarInterval
        var zone: String
        var boundaries: BucketBoundaries

        func serves(_ calendar: BucketCalendar) -> Bool {
            anchor == calendar.anchor && interval == calendar.interval && zone == calendar.timeZone.identifier
        }
    }

    private let window = Mutex<Window?>(nil)

    /// An empty cache.
    public init() {}

    /// The buckets of `calendar` from the one holding `from` to the one holding `to`, equal to
    /// `calendar.boundaries(from:to:maximumBucketCount:)` and throwing the same errors.
    public func boundaries(
        of calendar: BucketCalendar, from: Timestamp, to: Timestamp,
        maximumBucketCount: Int = BucketCalendar.defaultMaximumBucketCount
    ) throws -> BucketBoundaries {
        guard from <= to, SupportedInstants.contains(from), SupportedInstants.contains(to)
        else {
            return try calendar.boundaries(from: from, to: to, maximumBucketCount: maximumBucketCount)
        }
        let known = window.withLock { $0 }.flatMap { $0.serves(calendar) ? $0.boundaries : nil }
        if let known, let slice = Self.slice(known, from: from, to: to) {
            return try checked(slice, calendar, from, to, maximumBucketCount)
        }
        guard let grown = try grow(known, calendar, from: from, to: to) else {
            return try calendar.boundaries(from: from, to: to, maximumBucketCount: maximumBucketCount)
        }
        window.withLock {
            $0 = Window(
                anchor: calendar.anchor, interval: calendar.interval, zone: calendar.timeZone.identifier,
                boundaries: grown)
        }
        return try checked(Self.slice(grown, from: from, to: to)!, calendar, from, to, maximumBucketCount)
    }

    /// A window covering `known` (when it still fits) and `[from, to]` plus the growth margin on the side that
    /// grew, or nil when even the request alone exceeds ``windowLimit``.
    private func grow(
        _ known: BucketBoundaries?, _ calendar: BucketCalendar, from: Timestamp, to: Timestamp
    ) throws -> BucketBoundaries? {
        let margin = calendar.interval.nominalLength.multipliedReportingOverflow(by: Int64(Self.growthMargin))
        let pad = margin.overflow ? Int64.max : margin.partialValue
        let range = SupportedInstants.range
        func clamped(_ instant: Timestamp, by delta: Int64) -> Timestamp {
            let moved = instant.addingReportingOverflow(delta)
            return moved.overflow
                ? (delta < 0 ? range.lowerBound : range.upperBound)
                : min(max(moved.partialValue, range.lowerBound), range.upperBound)
        }
        var candidates: [(Timestamp, Timestamp)] = []
        if let known {
            let low = from < known.span.lowerBound ? clamped(from, by: -pad) : known.span.lowerBound
            let high = to >= known.span.upperBound ? clamped(to, by: pad) : known.span.upperBound - 1
            candidates.append((low, high))
        }
        candidates.append((clamped(from, by: -pad), clamped(to, by: pad)))
        candidates.append((from, to))
        for (low, high) in candidates {
            do {
                return try calendar.boundaries(from: low, to: high, maximumBucketCount: Self.windowLimit)
            } catch let error as HealthError where error.code == .invalidInterval {
                continue  // too wide for the window: try a narrower one
            }
        }
        return nil
    }

    /// Throws as the calendar would when the slice has more than `maximumBucketCount` buckets.
    private func checked(
        _ slice: BucketBoundaries, _ calendar: BucketCalendar, _ from: Timestamp, _ to: Timestamp,
        _ maximumBucketCount: Int
    ) throws -> BucketBoundaries {
        guard slice.count <= maximumBucketCount else {
            return try calendar.boundaries(from: from, to: to, maximumBucketCount: maximumBucketCount)
        }
        return slice
    }

    /// The buckets of `window` holding `from` through `to`, or nil when the window does not cover both.
    private static func slice(_ window: BucketBoundaries, from: Timestamp, to: Timestamp) -> BucketBoundaries? {
        guard let first = window.bucketIndex(of: from), let last = window.bucketIndex(of: to) else { return nil }
        return BucketBoundaries(
            firstBucketNumber: window.firstBucketNumber + first, starts: Array(window.starts[first...(last + 1)]))
    }
}
