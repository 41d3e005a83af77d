import Foundation

/// The UTC offsets of one time zone, learnt from Foundation one transition at a time.
///
/// It converts local wall times to instants with plain arithmetic and asks Foundation only when a query leaves
/// the stretch of time it already knows: twice per transition crossed (offset after it, next transition), or
/// twice to jump. Cheapest when queried in increasing order; a query before everything known starts over a
/// year earlier, so a walk backwards also asks Foundation about twice per transition. A mutable value: one per
/// computation, never shared between threads.
public struct ZoneOffsetWalker: Sendable {
    /// Farther than any UTC offset a zone has ever had (the largest are about ±16 hours of local mean time).
    public static let window: Int64 = 26 * Micros.hour
    /// How far before a query that precedes everything known the walk starts over.
    static let lookBack: Int64 = 400 * Micros.day

    private let zone: TimeZone
    /// `offsets[i]` holds on `[starts[i], starts[i + 1])`, the last one on `[starts.last, knownEnd)`.
    /// `starts[0]` is where the walk was seeded, the others are transitions.
    private var starts: [Timestamp] = []
    private var offsets: [Int64] = []
    /// The first transition after `starts.last`, `Int64.max` when Foundation knows none.
    private var knownEnd: Timestamp = .min

    /// A walker that knows nothing of `zone` yet.
    public init(zone: TimeZone) {
        self.zone = zone
    }

    /// The UTC offset in force at `instant`, in microseconds (local = instant + offset).
    public mutating func offset(at instant: Timestamp) -> Int64 {
        offsets[segment(containing: instant, through: instant)]
    }

    /// Which instant to take when a wall time occurs twice (a fall-back overlap).
    public enum RepeatedTimeChoice: Sendable {
        /// The first occurrence.
        case first
        /// The last occurrence.
        case last
        /// The occurrence whose UTC offset is this one; failing that, the one with the offset in force at
        /// `local - offset`; failing that, the first (Foundation's one-step correction for days and weeks).
        case keepingOffset(Int64)
    }

    /// The instant at which the zone's clocks show `local` (microseconds since 1970 on the local clock).
    ///
    /// A wall time that occurs twice resolves per `repeated`. One that does not occur (spring-forward gap) is
    /// read with the offset in force before the transition, which moves it later by the gap (02:30 in a
    /// 02:00→03:00 gap becomes 03:30), as Foundation's `Calendar` does.
    public mutating func instant(atLocal local: Int64, repeated: RepeatedTimeChoice) -> Timestamp {
        var secondaryOffset: Int64? = nil
        if case .keepingOffset(let offset) = repeated {
            secondaryOffset = self.offset(at: local - offset)
        }
        let first = segment(containing: local - Self.window, through: local + Self.window)
        var firstFound: Timestamp? = nil
        var lastFound: Timestamp? = nil
        var primaryMatch: Timestamp? = nil
        var secondaryMatch: Timestamp? = nil
        var index = first
        while index < starts.count && starts[index] <= local + Self.window {
            let candidate = local - offsets[index]
            let end = index + 1 < starts.count ? starts[index + 1] : knownEnd
            if candidate >= starts[index] && candidate < end {
                if firstFound == nil { firstFound = candidate }
                lastFound = candidate
                if case .keepingOffset(let offset) = repeated, offsets[index] == offset { primaryMatch = candidate }
                if offsets[index] == secondaryOffset { secondaryMatch = candidate }
            }
            index += 1
        }
        if let firstFound, let lastFound {
            switch repeated {
            case .first: return firstFound
            case .last: return lastFound
            case .keepingOffset: return primaryMatch ?? secondaryMatch ?? firstFound
            }
        }
        // No instant shows this wall time: it lies in a gap. Use the offset before the first transition whose
        // gap contains it.
        index = first + 1
        while index < starts.count {
            if local - offsets[index - 1] >= starts[index] && local - offsets[index] < starts[index] {
                return local - offsets[index - 1]
            }
            index += 1
        }
        // Unreachable for offsets smaller than `window`; fall back on the offset at the window's start.
        return local - offsets[first]
    }

    /// Makes `[low, high]` known and returns the index of the segment containing `low`.
    private mutating func segment(containing low: Timestamp, through high: Timestamp) -> Int {
        if starts.isEmpty || low >= knownEnd {
            seed(at: low)
        } else if low < starts[0] {
            seed(at: low > Int64.min + Self.lookBack ? low - Self.lookBack : .min)
        }
        while knownEnd <= high {
            let transition = knownEnd
            starts.append(transition)
            offsets.append(Self.offset(of: zone, at: transition))
            knownEnd = Self.transition(of: zone, after: transition)
        }
        // Last segment starting at or before `low`; usually the final one or close to it.
        var index = starts.count - 1
        while starts[index] > low { index -= 1 }
        return index
    }

    private mutating func seed(at instant: Timestamp) {
        starts = [instant]
        offsets = [Self.offset(of: zone, at: instant)]
        knownEnd = Self.transition(of: zone, after: instant)
    }

    private static func offset(of zone: TimeZone, at instant: Timestamp) -> Int64 {
        Int64(zone.secondsFromGMT(for: date(instant))) * Micros.second
    }

    private static func transition(of zone: TimeZone, after instant: Timestamp) -> Timestamp {
        guard let next = zone.nextDaylightSavingTimeTransition(after: date(instant)) else { return .max }
        // Transitions fall on whole seconds; rounding there avoids Double's lost microseconds after ~2255.
        let micros = Int64(next.timeIntervalSince1970.rounded()) * Micros.second
        // Foundation answers strictly after `instant`; keep it so after the rounding too.
        return max(micros, instant + 1)
    }

    private static func date(_ instant: Timestamp) -> Foundation.Date {
        Foundation.Date(timeIntervalSince1970: Double(instant) / 1e6)
    }
}
