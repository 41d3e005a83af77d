import Foundation
import HealthModel

/// The calendar arithmetic of a statistics collection (HEALTHKIT.md §7): which bucket an instant falls in.
///
/// Bucket k (any integer) is `[anchor ⊕ k·C, anchor ⊕ (k+1)·C)`, where `⊕` adds k·C to the anchor in one step
/// (a monthly series anchored on Jan 31 starts Feb 29, then Mar 31). Seconds, minutes and hours are elapsed
/// time; days, weeks, months and years keep the anchor's local wall time in the zone, so a day bucket lasts 23
/// or 25 hours across DST and the anchor only fixes the phase. A wall time that does not exist that day
/// (spring-forward gap) moves later by the gap (02:30 becomes 03:30). One that occurs twice (fall-back) takes,
/// like Foundation's `Calendar.date(byAdding:value:to:)`: for k > 0 the first occurrence; for k < 0 with days
/// and weeks the occurrence with the anchor's UTC offset (Foundation subtracts k·24 h, then corrects by the
/// offset change), with months and years the second occurrence. Bucket 0 starts at the anchor itself. An
/// instant on a boundary belongs to the later bucket.
///
/// Two deviations from Foundation 6.3, both Foundation's mistakes: where a zone skipped a whole local day
/// (Pacific/Apia on 2011-12-30) the skipped day's bucket is empty and later days keep their dates (Foundation
/// shifts them by a day); and a negative month count clamps to the target month's real length (Foundation
/// takes Mar 30, 2002 minus 25 months to Feb 28, 2000, not Feb 29).
///
/// Immutable and `Sendable`; each call works on its own state, so one calendar may serve many threads.
/// Foundation is asked only for UTC offsets and transitions (a few calls per DST change in the range).
public struct BucketCalendar: Sendable {
    /// The default cap on the buckets of one query.
    public static let defaultMaximumBucketCount = 10_000_000

    /// The instant bucket 0 starts at.
    public let anchor: Timestamp
    /// The length of one bucket.
    public let interval: CalendarInterval
    /// The zone whose local calendar days, weeks, months and years follow.
    public let timeZone: TimeZone
    /// The anchor's local day number, date, time of day and UTC offset, for calendar units.
    private let anchorDay: Int
    private let anchorDate: CivilCalendar.Date
    private let anchorTimeOfDay: Int64
    private let anchorOffset: Int64

    /// A calendar for buckets of `interval` from `anchor` in the zone named `timeZoneIdentifier` (IANA id).
    ///
    /// Throws ``ErrorCode/invalidTimeZone`` for an unknown zone, ``ErrorCode/invalidInterval`` for a count
    /// outside 1...``CalendarInterval/maxCount`` and ``ErrorCode/invalidArgument`` for an anchor outside
    /// ``SupportedInstants``.
    public init(anchor: Timestamp, interval: CalendarInterval, timeZoneIdentifier: String) throws {
        try interval.validate()
        guard let zone = TimeZone(identifier: timeZoneIdentifier) else {
            throw HealthError(.invalidTimeZone, "unknown time zone \"\(timeZoneIdentifier)\"")
        }
        try Self.checkSupported(anchor, role: "anchor")
        self.anchor = anchor
        self.interval = interval
        self.timeZone = zone
        var walker = ZoneOffsetWalker(zone: zone)
        anchorOffset = walker.offset(at: anchor)
        let local = anchor + anchorOffset
        anchorDay = Int(floorDivide(local, Micros.day))
        anchorTimeOfDay = local - Int64(anchorDay) * Micros.day
        anchorDate = CivilCalendar.date(ofDay: anchorDay)
    }

    /// Every bucket from the one holding `from` to the one holding `to` (both inclusive), empty ones included.
    ///
    /// The first and last buckets usually extend beyond `[from, to]`. Throws ``ErrorCode/invalidArgument``
    /// when `from > to` or either lies outside ``SupportedInstants``, and ``ErrorCode/invalidInterval`` when
    /// there would be more than `maximumBucketCount` buckets (checked before allocating).
    public func boundaries(
        from: Timestamp, to: Timestamp, maximumBucketCount: Int = defaultMaximumBucketCount
    ) throws -> BucketBoundaries {
        try Self.checkSupported(from, role: "range start")
        try Self.checkSupported(to, role: "range end")
        guard from <= to else {
            throw HealthError(.invalidArgument, "range start \(from) is after range end \(to)")
        }
        var walker = ZoneOffsetWalker(zone: timeZone)
        let first = bucketNumber(containing: from, walker: &walker)
        let last = bucketNumber(containing: to, walker: &walker)
        let count = last - first + 1
        guard count <= maximumBucketCount else {
            throw HealthError(
                .invalidInterval,
                "\(count) buckets of \(interval) between \(from) and \(to) exceed the limit of \(maximumBucketCount);"
                    + " use a longer interval or a shorter range")
        }
        var starts = [Timestamp]()
        starts.reserveCapacity(count + 1)
        for number in first...(last + 1) {
            starts.append(start(ofBucket: number, walker: &walker))
        }
        return BucketBoundaries(firstBucketNumber: first, starts: starts)
    }

    /// The bucket holding `instant` (for a live update touching one instant).
    ///
    /// Throws ``ErrorCode/invalidArgument`` when `instant` lies outside ``SupportedInstants``.
    public func bucket(containing instant: Timestamp) throws -> Bucket {
        try boundaries(from: instant, to: instant)[0]
    }

    // MARK: Arithmetic

    /// The number of the bucket holding `instant`: an estimate from local dates, then corrected by comparing
    /// with actual starts (at most a step or two).
    private func bucketNumber(containing instant: Timestamp, walker: inout ZoneOffsetWalker) -> Int {
        if let step = fixedStep {
            return Int(floorDivide(instant - anchor, step))
        }
        let local = instant + walker.offset(at: instant)
        var number: Int
        switch interval.unit {
        case .day, .week:
            let phaseDay = Int(floorDivide(local - anchorTimeOfDay, Micros.day))
            number = floorDivide(phaseDay - anchorDay, interval.count * (interval.unit == .week ? 7 : 1))
        case .month:
            let date = CivilCalendar.date(ofDay: Int(floorDivide(local, Micros.day)))
            let months = (date.year - anchorDate.year) * 12 + date.month - anchorDate.month
            number = floorDivide(months, interval.count)
        default:
            let date = CivilCalendar.date(ofDay: Int(floorDivide(local, Micros.day)))
            number = floorDivide(date.year - anchorDate.year, interval.count)
        }
        while start(ofBucket: number, walker: &walker) > instant { number -= 1 }
        while start(ofBucket: number + 1, walker: &walker) <= instant { number += 1 }
        return number
    }

    /// The first instant of bucket `number`: `anchor ⊕ number·C`.
    private func start(ofBucket number: Int, walker: inout ZoneOffsetWalker) -> Timestamp {
        if let step = fixedStep {
            return anchor + Int64(number) * step
        }
        if number == 0 { return anchor }  // even when the anchor is the second occurrence of its wall time
        let steps = number * interval.count
        let day: Int
        switch interval.unit {
        case .day:
            day = anchorDay + steps
        case .week:
            day = anchorDay + steps * 7
        case .month:
            let monthIndex = anchorDate.year * 12 + (anchorDate.month - 1) + steps
            let year = floorDivide(monthIndex, 12)
            day = clampedDayNumber(year: year, month: monthIndex - year * 12 + 1)
        default:
            day = clampedDayNumber(year: anchorDate.year + steps, month: anchorDate.month)
        }
        let repeated: ZoneOffsetWalker.RepeatedTimeChoice =
            if number > 0 {
                .first
            } else if interval.unit == .day || interval.unit == .week {
                .keepingOffset(anchorOffset)
            } else {
                .last
            }
        return walker.instant(atLocal: Int64(day) * Micros.day + anchorTimeOfDay, repeated: repeated)
    }

    /// The anchor's day of month in `year`/`month`, or the month's last day when it is shorter (Jan 31 → Feb 29).
    private func clampedDayNumber(year: Int, month: Int) -> Int {
        let day = min(anchorDate.day, CivilCalendar.daysInMonth(year: year, month: month))
        return CivilCalendar.dayNumber(CivilCalendar.Date(year: year, month: month, day: day))
    }

    /// The bucket length in microseconds for seconds, minutes and hours; nil for calendar units.
    private var fixedStep: Int64? {
        switch interval.unit {
        case .second: Int64(interval.count) * Micros.second
        case .minute: Int64(interval.count) * Micros.minute
        case .hour: Int64(interval.count) * Micros.hour
        case .day, .week, .month, .year: nil
        }
    }

    private static func checkSupported(_ instant: Timestamp, role: String) throws {
        guard SupportedInstants.contains(instant) else {
            throw HealthError(.invalidArgument, "\(role) \(instant) is outside \(SupportedInstants.description)")
        }
    }
}
