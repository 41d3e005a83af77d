import Foundation
import HealthModel

/// The slow, obviously correct bucket arithmetic the tests compare ``BucketCalendar`` with.
///
/// Bucket k starts at `Calendar.date(byAdding: unit, value: k·count, to: anchor)`, one Foundation call per
/// bucket, and the bucket holding an instant is found by walking k one step at a time.
///
/// Except for anchors on day 29, 30 or 31 of a month with months and years: Foundation 6.3's
/// `date(byAdding: .month, value: -25, …)` from Mar 30, 2002 answers Feb 28, 2000 (and -49 answers Mar 1,
/// 1998), taking February's length from the wrong year when a negative addition crosses years. There the
/// reference takes the anchor's wall-clock components, moves the month by integer arithmetic, clamps the day
/// and asks `Calendar.date(from:)` (first occurrence of a repeated wall time), then for k < 0 moves to the
/// second occurrence as `date(byAdding:)` does.
struct ReferenceBucketCalendar {
    let anchor: Timestamp
    let interval: CalendarInterval
    let calendar: Calendar

    init(anchor: Timestamp, interval: CalendarInterval, timeZoneIdentifier: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: timeZoneIdentifier)!
        self.anchor = anchor
        self.interval = interval
        self.calendar = calendar
    }

    /// `anchor ⊕ k·C` by Foundation.
    func start(ofBucket number: Int) -> Timestamp {
        if number == 0 { return anchor }
        if interval.unit == .month || interval.unit == .year,
            calendar.component(.day, from: Self.date(anchor)) > 28
        {
            return startByComponents(ofBucket: number)
        }
        let component: Calendar.Component =
            switch interval.unit {
            case .second: .second
            case .minute: .minute
            case .hour: .hour
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
        let date = calendar.date(byAdding: component, value: number * interval.count, to: Self.date(anchor))!
        return Self.timestamp(date)
    }

    private func startByComponents(ofBucket number: Int) -> Timestamp {
        var wallClock = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second, .nanosecond], from: Self.date(anchor))
        let months =
            wallClock.year! * 12 + wallClock.month! - 1 + number * interval.count * (interval.unit == .year ? 12 : 1)
        let year = months >= 0 ? months / 12 : (months - 11) / 12
        let month = months - year * 12 + 1
        let firstOfMonth = calendar.date(from: DateComponents(year: year, month: month, day: 1, hour: 12))!
        let length = calendar.range(of: .day, in: .month, for: firstOfMonth)!.count
        wallClock.year = year
        wallClock.month = month
        wallClock.day = min(wallClock.day!, length)
        let first = calendar.date(from: wallClock)!
        if number < 0 {
            // The same wall time once more, one offset change later (fall-back)?
            let change =
                calendar.timeZone.secondsFromGMT(for: first) - calendar.timeZone.secondsFromGMT(for: first + 86_400)
            let again = first + TimeInterval(change)
            if change > 0, calendar.dateComponents(in: calendar.timeZone, from: again).hour == wallClock.hour,
                calendar.dateComponents(in: calendar.timeZone, from: again).minute == wallClock.minute
            {
                return Self.timestamp(again)
            }
        }
        return Self.timestamp(first)
    }

    /// The k whose bucket holds `instant`, by walking from a rough estimate.
    func bucketNumber(containing instant: Timestamp) -> Int {
        let roughLength: Double =
            switch interval.unit {
            case .second: 1
            case .minute: 60
            case .hour: 3600
            case .day: 86_400
            case .week: 604_800
            case .month: 2_629_746
            case .year: 31_556_952
            }
        var number = Int((Double(instant - anchor) / 1e6 / (roughLength * Double(interval.count))).rounded(.down))
        while start(ofBucket: number) > instant { number -= 1 }
        while start(ofBucket: number + 1) <= instant { number += 1 }
        return number
    }

    /// Every bucket from the one holding `from` to the one holding `to`: (first k, starts and final end).
    func boundaries(from: Timestamp, to: Timestamp) -> (firstBucketNumber: Int, starts: [Timestamp]) {
        let first = bucketNumber(containing: from)
        let last = bucketNumber(containing: to)
        return (first, (first...(last + 1)).map(start(ofBucket:)))
    }

    static func date(_ instant: Timestamp) -> Date {
        Date(timeIntervalSince1970: Double(instant) / 1e6)
    }

    static func timestamp(_ date: Date) -> Timestamp {
        Timestamp((date.timeIntervalSince1970 * 1e6).rounded())
    }
}
