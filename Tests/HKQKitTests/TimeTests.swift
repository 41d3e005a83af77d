import Foundation
import HealthModel
import Testing
import TestSupport

@testable import HKQKit

/// ISO 8601 text, civil time, date arguments, timestamp and duration formatting.
@Suite struct TimeTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let newYork = TimeZone(identifier: "America/New_York")!

    /// Seconds since the epoch as a timestamp.
    static func at(_ seconds: Int64, micros: Int64 = 0) -> Timestamp { seconds * 1_000_000 + micros }

    @Test(
        arguments: [
            ("2024-03-10T08:00:00-05:00", at(1_710_075_600)),
            ("2024-03-10T13:00:00Z", at(1_710_075_600)),
            ("2024-03-10t13:00:00z", at(1_710_075_600)),
            ("2024-03-10 13:00:00+00:00", at(1_710_075_600)),
            ("2024-03-10T18:30:00+0530", at(1_710_075_600)),
            ("2024-03-10T18:30+05:30", at(1_710_075_600)),
            ("2024-03-10T13:00:00.25Z", at(1_710_075_600, micros: 250_000)),
            ("2024-03-10T13:00:00.123456789Z", at(1_710_075_600, micros: 123_456)),
            ("1969-12-31T23:59:59.5Z", -500_000),
            ("2000-02-29T00:00:00Z", at(951_782_400)),
            ("2024-03-10T13:00:00+01", at(1_710_072_000)),
        ] as [(String, Timestamp)])
    func isoWithOffsetParses(text: String, expected: Timestamp) {
        #expect(ISO8601Text.timestamp(text) == expected)
    }

    @Test(arguments: [
        "2024-03-10", "2024-03-10T08:00:00", "2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z",
        "2024-03-10T24:00:00Z", "2024-03-10T08:60:00Z", "2024-03-10T08:00:61Z", "2024-3-10T08:00:00Z",
        "2024-03-10T08:00:00.Z", "2024-03-10T08:00:00+25:00", "2024-03-10T08:00:00Zjunk", "", "yesterday",
        "2024-03-10T08:00:00 -05:00",
    ])
    func isoWithoutValidOffsetIsRejected(text: String) {
        #expect(ISO8601Text.timestamp(text) == nil)
    }

    @Test func civilTimeRoundTripsAcrossCenturies() {
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let instant = Int64(days) * 86_400_000_000 + 3_723_000_004
            let civil = CivilTime(timestamp: instant, offsetSeconds: -18_000)
            #expect(civil.isValid)
            #expect(civil.timestamp(offsetSeconds: -18_000) == instant)
        }
        #expect(
            CivilTime(timestamp: -1, offsetSeconds: 0)
                == CivilTime(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59, microsecond: 999_999))
    }

    /// 2024-03-10T15:00:00Z is 11:00 in New York, the day clocks sprang forward (midnight was -05:00).
    static let now = at(1_710_082_800)

    @Test(
        arguments: [
            ("now", now), ("NOW", now), ("now-2h", now - 2 * 3_600_000_000), ("now-30m", now - 30 * 60_000_000),
            ("now+90s", now + 90_000_000),
            // Calendar days: 11:00 EDT today, 11:00 EST a week ago (7 × 24 h − 1 h earlier).
            ("now-7d", now - (7 * 24 - 1) * 3_600_000_000), ("now-1w", now - (7 * 24 - 1) * 3_600_000_000),
            ("today", at(1_710_046_800)), ("yesterday", at(1_710_046_800 - 86_400)),
            ("tomorrow", at(1_710_046_800 + 23 * 3600)), ("today-6d", at(1_710_046_800 - 6 * 86_400)),
            ("2024-03-10", at(1_710_046_800)), ("2024-03-11", at(1_710_046_800 + 23 * 3600)),
            ("2024-03-10T08:00", at(1_710_072_000)), ("2024-03-10T08:00:00-05:00", at(1_710_075_600)),
        ] as [(String, Timestamp)])
    func dateArgumentsInNewYork(text: String, expected: Timestamp) {
        let parser = DateArgumentParser(timeZone: Self.newYork, now: Self.now)
        #expect(parser.parse(text) == expected)
    }

    @Test func todayFollowsTheZone() {
        let now = Self.at(1_710_028_800)  // 2024-03-10T00:00:00Z: still the 9th in New York, the 10th in Kolkata
        #expect(DateArgumentParser(timeZone: Self.utc, now: now).parse("today") == now)
        #expect(DateArgumentParser(timeZone: Self.newYork, now: now).parse("today") == Self.at(1_709_960_400))
        let kolkata = TimeZone(identifier: "Asia/Kolkata")!
        #expect(DateArgumentParser(timeZone: kolkata, now: now).parse("today") == Self.at(1_710_009_000))
    }

    @Test(arguments: ["now-", "now-7", "now-7x", "now*2h", "someday", "2024-03-", "today+", "now-1.5h", "nowish"])
    func badDateArgumentsAreRejected(text: String) {
        #expect(DateArgumentParser(timeZone: Self.utc, now: Self.now).parse(text) == nil)
    }

    @Test func timestampsPrintInTheZoneWithTheOffsetOfTheInstant() {
        let newYork = TimestampFormatter(timeZone: Self.newYork)
        #expect(newYork.display(Self.at(1_710_075_600)) == "2024-03-10 09:00:00 -04:00")
        #expect(newYork.display(Self.at(1_710_046_800)) == "2024-03-10 00:00:00 -05:00")
        #expect(newYork.iso8601(Self.at(1_710_046_800, micros: 250_000)) == "2024-03-10T00:00:00.25-05:00")
        let kathmandu = TimestampFormatter(timeZone: TimeZone(identifier: "Asia/Kathmandu")!)
        #expect(kathmandu.iso8601(0) == "1970-01-01T05:30:00+05:30")
        #expect(TimestampFormatter(timeZone: Self.utc).display(-1) == "1969-12-31 23:59:59.999999 +00:00")
        #expect(newYork.cell(0, format: .table) == .string("1969-12-31 19:00:00 -05:00"))
        #expect(newYork.cell(0, format: .json) == .string("1969-12-31T19:00:00-05:00"))
    }

    @Test func printedTimesParseBack() {
        let formatter = TimestampFormatter(timeZone: TimeZone(identifier: "Australia/Lord_Howe")!)
        for instant in stride(from: Self.at(1_700_000_000), to: Self.at(1_740_000_000), by: 86_399_123_457) {
            #expect(ISO8601Text.timestamp(formatter.iso8601(instant)) == instant)
            #expect(
                ISO8601Text.timestamp(formatter.display(instant).replacingOccurrences(of: " +", with: "+")) == instant)
        }
    }

    @Test(
        arguments: [
            (0, "0s"), (7, "7µs"), (250_000, "250ms"), (45_000_000, "45s"), (125 * 60_000_000, "2h 05m"),
            (7_510_000_000, "2h 05m 10s"), (3_600_000_000, "1h"), (86_400_000_000 + 10_000_000, "1d 00h 00m 10s"),
            (600_000_000, "10m"), (-90_000_000, "-1m 30s"),
        ] as [(Int64, String)])
    func durationsForPeople(micros: Int64, expected: String) {
        #expect(HumanFormat.duration(micros: micros) == expected)
    }

    @Test func byteCountsForPeople() {
        #expect(HumanFormat.bytes(512) == "512 B")
        #expect(HumanFormat.bytes(1536) == "1.5 KiB")
        #expect(HumanFormat.bytes(2 << 20) == "2 MiB")
        #expect(HumanFormat.bytes(25_795_379) == "24.6 MiB")
        #expect(HumanFormat.bytes(3 << 40) == "3 TiB")
    }

    @Test(
        "offsets learnt per transition agree with Foundation at every instant, walked forwards, backwards or at random",
        arguments: ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "America/Sao_Paulo"])
    func offsetsAgreeWithFoundation(zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        var random = SplitMix64(seed: UInt64(zoneName.utf8.count))
        // 1890 to 2040 in steps of about two weeks, plus the instants just around each step.
        let step = 14 * Micros.day + 3 * Micros.hour + 7 * Micros.minute
        var instants: [Timestamp] = []
        var t: Timestamp = -2_524_521_600 * Micros.second
        while t < 2_208_988_800 * Micros.second {
            instants += [t, t + Micros.second]
            t += step
        }
        let orders = [instants, instants.reversed(), instants.shuffled(using: &random)]
        for order in orders {
            let formatter = TimestampFormatter(timeZone: zone)
            for instant in order {
                let expected = zone.secondsFromGMT(
                    for: Date(timeIntervalSince1970: Double(instant.floorDivided(by: Micros.second).quotient)))
                if formatter.offsetSeconds(at: instant) != expected {
                    Issue.record("\(zoneName) at \(instant): \(formatter.offsetSeconds(at: instant)) != \(expected)")
                    break
                }
            }
        }
    }

    @Test("instants render as their fields padded and joined, at any instant, in any zone")
    func renderingAgreesWithPaddedFields() throws {
        var random = SplitMix64(seed: 0x7265_6E64)
        for zoneName in ["UTC", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe"] {
            let formatter = TimestampFormatter(timeZone: try #require(TimeZone(identifier: zoneName)))
            for _ in 0..<2_000 {
                // Mostly recent instants, some across the whole range (negative and five-digit years).
                let instant =
                    Bool.random(using: &random)
                    ? Timestamp.random(in: 0...(4_102_444_800 * Micros.second), using: &random)
                    : Timestamp.random(in: (Timestamp.min / 2)...(Timestamp.max / 2), using: &random)
                let rounded = Int.random(in: 0..<3, using: &random) == 0 ? instant - instant % Micros.second : instant
                let separator = ["T", " ", "", "  at  "].randomElement(using: &random)!
                let offsetSeparator = ["", " ", " UTC"].randomElement(using: &random)!
                let zeroAsZ = Bool.random(using: &random)
                #expect(
                    formatter.render(
                        rounded, separator: separator, offsetSeparator: offsetSeparator, zeroAsZ: zeroAsZ)
                        == Self.plainRender(
                            formatter, rounded, separator: separator, offsetSeparator: offsetSeparator,
                            zeroAsZ: zeroAsZ))
            }
        }
    }

    /// `render` restated by concatenating fields padded with the standard library (not the formatter's writer).
    static func plainRender(
        _ formatter: TimestampFormatter, _ instant: Timestamp, separator: String, offsetSeparator: String,
        zeroAsZ: Bool
    ) -> String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value.magnitude)
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let offset = formatter.offsetSeconds(at: instant)
        let civil = CivilTime(timestamp: instant, offsetSeconds: offset)
        var text = pad(civil.year, 4) + "-" + pad(civil.month, 2) + "-" + pad(civil.day, 2)
        text += separator + pad(civil.hour, 2) + ":" + pad(civil.minute, 2) + ":" + pad(civil.second, 2)
        if civil.microsecond != 0 {
            var fraction = pad(civil.microsecond, 6)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        if zeroAsZ, offset == 0 { return text + "Z" }
        let minutes = abs(offset) / 60
        return text + offsetSeparator + (offset < 0 ? "-" : "+") + pad(minutes / 60, 2) + ":" + pad(minutes % 60, 2)
    }

    @Test(
        "offsets print as ±HH:MM",
        arguments: [(-18_000, "-05:00"), (20_700, "+05:45"), (0, "+00:00"), (-34_200, "-09:30"), (50_400, "+14:00")])
    func offsetsPrint(seconds: Int, text: String) {
        #expect(TimestampFormatter.offsetText(seconds: seconds) == text)
    }

    @Test(
        "zero-padding writes the digits of any value, sign first",
        arguments: [
            (0, 2, "00"), (7, 2, "07"), (42, 2, "42"), (123, 2, "123"), (2024, 4, "2024"), (5, 4, "0005"),
            (-5, 4, "-0005"), (-12345, 2, "-12345"), (999_999, 6, "999999"), (Int.max, 1, String(Int.max)),
            (Int.min, 1, String(Int.min)),
        ])
    func padding(value: Int, width: Int, text: String) {
        #expect(TimestampFormatter.pad(value, width) == text)
    }

    @Test(
        "the local zone's identifier is what follows the last zoneinfo directory of /etc/localtime's target",
        arguments: [
            ("/usr/share/zoneinfo/Europe/Berlin", "Europe/Berlin"), ("../usr/share/zoneinfo/Etc/UTC", "Etc/UTC"),
            ("/usr/share/zoneinfo/posix/zoneinfo/Asia/Kolkata", "Asia/Kolkata"), ("/usr/share/zoneinfo/", nil),
            ("/etc/timezone", nil),
        ] as [(String, String?)])
    func localZoneIdentifier(target: String, identifier: String?) {
        #expect(LocalTimeZone.zoneIdentifier(linkTarget: target) == identifier)
    }

    @Test("the local zone is Foundation's current zone: UTC under any of its names as GMT, others by name")
    func localZoneIsFoundations() {
        let local = LocalTimeZone.current
        let foundations = TimeZone.current
        if LocalTimeZone.utcNames.contains(foundations.identifier) {
            #expect(local == TimeZone.gmt)
        } else {
            #expect(local.identifier == foundations.identifier)
        }
        for year in stride(from: 1970, through: 2040, by: 5) {
            let instant = Date(timeIntervalSince1970: Double(year - 1970) * 365.25 * 86_400)
            #expect(local.secondsFromGMT(for: instant) == foundations.secondsFromGMT(for: instant), "\(year)")
        }
    }

    @Test("UTC's names are the fixed zero-offset zone, as Foundation's zone database has them; other names by name")
    func utcNames() throws {
        let instants = stride(from: -2_000_000_000.0, through: 4_000_000_000, by: 15_778_800).map {
            Date(timeIntervalSince1970: $0)
        }
        for name in LocalTimeZone.utcNames {
            let zone = try #require(LocalTimeZone.named(name))
            let database = try #require(TimeZone(identifier: name), "\(name)")
            #expect(zone == TimeZone.gmt)
            #expect(instants.allSatisfy { database.secondsFromGMT(for: $0) == 0 }, "\(name)")
            #expect(database.nextDaylightSavingTimeTransition(after: instants[0]) == nil, "\(name)")
        }
        #expect(LocalTimeZone.named("Europe/Berlin")?.identifier == "Europe/Berlin")
        #expect(LocalTimeZone.named("Europe/Berlin")?.secondsFromGMT(for: instants[100]) == 3600)
        #expect(LocalTimeZone.named("Mars/Olympus_Mons") == nil)
    }

    @Test(
        "a local date-time is the instant Foundation's Calendar gives it, around transitions, gaps and overlaps",
        arguments: ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Apia", "Asia/Kolkata"])
    func localTimesAgreeWithCalendar(zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parser = DateArgumentParser(timeZone: zone, now: 0)
        var random = SplitMix64(seed: 0x1D_A7E5)
        // Wall times within a few hours of each transition from 2005 to 2030, to the minute, and random ones.
        var transition = Date(timeIntervalSince1970: 1_104_537_600)
        var wallTimes: [Date] = []
        while let next = zone.nextDaylightSavingTimeTransition(after: transition), next.timeIntervalSince1970 < 1.9e9 {
            transition = next
            let local = next.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: next))
            for _ in 0..<6 {
                wallTimes.append(
                    Date(
                        timeIntervalSince1970: local
                            + Double(
                                Int.random(in: -3...3, using: &random) * 1800 + Int.random(in: -59...59, using: &random)
                                    * 60)))
            }
        }
        for _ in 0..<200 {
            wallTimes.append(Date(timeIntervalSince1970: Double(Int.random(in: 0...1_900_000_000, using: &random))))
        }
        for wall in wallTimes {
            // The wall time's fields, read as UTC.
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            let fields = utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: wall)
            let civil = CivilTime(
                year: fields.year!, month: fields.month!, day: fields.day!, hour: fields.hour!, minute: fields.minute!,
                second: fields.second!)
            let expected = try #require(calendar.date(from: fields))
            #expect(
                parser.local(civil) == DateArgumentParser.timestamp(expected), "\(zoneName) \(fields)")
        }
    }
}
