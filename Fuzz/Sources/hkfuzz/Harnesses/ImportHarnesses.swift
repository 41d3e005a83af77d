import Foundation
import HealthCodec
import HealthImport
import HealthModel

/// The Apple Health export importer: zip directory, XML tokenizer, and the field parsers behind its records.
enum ImportHarnesses {
    /// Small batches, so batching and the pending-row cap run too.
    static let options = ImportOptions(batchSize: 7, maxPendingRows: 20, maxLinesPerReason: 2)

    /// Imports `bytes` (an export named `name`) to the end; returns the batches, or `nil` when the export is
    /// rejected as damaged. Every batch must be one the server accepts the shape of, and the summary must count
    /// exactly the rows handed out.
    @discardableResult
    static func importAll(_ bytes: [UInt8], name: String) -> [SampleBatch]? {
        guard
            let reader = attempt({ try ExportReader(bytes: Data(bytes), name: name, subject: "anna", options: options) }
            )
        else { return nil }
        var batches: [SampleBatch] = []
        do {
            while let batch = try reader.nextBatch() {
                require(batch.count > 0 && batch.count <= options.batchSize, "a batch of \(batch.count) rows")
                require(attempt({ try SampleBatchCodec.encode(batch) }) != nil, "an imported batch does not encode")
                batches.append(batch)
            }
        } catch {
            return nil
        }
        let rows = batches.reduce(0) { $0 + $1.count }
        require(reader.summary.importedCount == rows, "summary counts \(reader.summary.importedCount), batches \(rows)")
        return batches
    }

    /// The input is an export.xml.
    static let exportXML = Harness(
        "export-xml", "ExportReader on an export.xml in memory (XML tokenizer, records, batching)"
    ) { input in
        importAll(input.rest(), name: "export.xml")
    }

    /// The input is an export.zip.
    static let exportZip = Harness(
        "export-zip", "ExportReader on an export.zip in memory (zip directory, zip64, inflate, CRC)"
    ) { input in
        importAll(input.rest(), name: "export.zip")
    }

    /// `text` escaped for a double-quoted attribute value, so the parser behind it sees exactly `text`.
    static func attributeEscaped(_ text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for byte in text {
            switch byte {
            case UInt8(ascii: "&"): out += Array("&amp;".utf8)
            case UInt8(ascii: "\""): out += Array("&quot;".utf8)
            case UInt8(ascii: "<"): out += Array("&lt;".utf8)
            case 0..<0x20: out += Array("&#\(byte);".utf8)
            default: out.append(byte)
            }
        }
        return out
    }

    /// A one-record export with `date` as start and end and `value` as the value.
    static func recordExport(date: [UInt8], value: [UInt8]) -> [UInt8] {
        Array(
            #"<?xml version="1.0" encoding="UTF-8"?><HealthData locale="en_US"><Record type="HKQuantityTypeIdentifierStepCount" sourceName="iPhone" unit="count" startDate=""#
                .utf8)
            + attributeEscaped(date) + Array(#"" endDate=""#.utf8) + attributeEscaped(date)
            + Array(#"" value=""#.utf8) + attributeEscaped(value) + Array(#""/></HealthData>"#.utf8)
    }

    /// A date every export parser accepts, and a plain count.
    static let goodDate = Array("2016-02-24 23:32:24 -0400".utf8)
    static let goodValue = Array("13".utf8)

    /// Byte 0 picks the field (even: the dates, odd: the value); the rest is its text, in a one-record export.
    /// The importer's date and number parsers must agree with independent references: a date it accepts is the
    /// instant ``ReferenceDate`` computes, and a value it accepts is what Swift's `Double(_:)` reads.
    static let exportFields = Harness(
        "export-fields", "export date and decimal parsers via a one-record export, against reference parsers",
        seeds: {
            ["2016-02-24 23:32:24 -0400", "20170121155300-0400", "2017-01-21T15:53:00+05:30", "2017-01-21 15:53:00Z"]
                .map { [0] + Array($0.utf8) }
                + ["13", "0.97", "-3.5", "1.2e-05", "12345678901234567890.5", "+.5", "7e22"].map {
                    [1] + Array($0.utf8)
                }
        }
    ) { input in
        let fuzzDate = input.byte() & 1 == 0
        let text = input.rest()
        let batches = importAll(
            recordExport(date: fuzzDate ? text : goodDate, value: fuzzDate ? goodValue : text), name: "export.xml")
        // Text that is not well-formed XML content (bad UTF-8, a forbidden character) fails the whole export.
        guard let batches else { return }
        let imported = batches.first
        let string = String(decoding: text, as: UTF8.self)
        if fuzzDate {
            let reference = ReferenceDate.parse(string)
            if let imported {
                require(reference != nil, "the importer accepted the date \"\(string)\", the reference does not")
                if let instant = reference?.instant {
                    require(imported.starts == [instant], "date \"\(string)\": \(imported.starts) vs \(instant)")
                }
            } else if let reference, (1971...2100).contains(reference.year) {
                require(false, "the importer rejected the date \"\(string)\"")
            }
        } else {
            let reference = ReferenceDecimal.parse(string)
            if let imported {
                require(reference != nil, "the importer accepted the value \"\(string)\", the reference does not")
                // Stored as its content identity is computed: rounded to 9 significant digits (IdentityValue).
                if let reference {
                    require(
                        imported.values == [IdentityValue.rounded(reference)], "value \"\(string)\": \(imported.values)"
                    )
                }
            } else if let reference, reference >= 0, reference.isFinite {
                require(false, "the importer rejected the value \"\(string)\" (\(reference))")
            }
        }
    }
}

/// The date forms exports use, parsed with regular expressions and Foundation's calendar: a reference for the
/// importer's hand-written parser.
enum ReferenceDate {
    /// `yyyy-MM-dd HH:mm:ss ±HHMM` with `T` for the space, no space before the zone, `±HH:MM` or `Z`; and
    /// `yyyyMMddHHmmss±HHMM`.
    static let patterns = [
        try! NSRegularExpression(
            pattern:
                #"^([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2}) ?(Z|[+-][0-9]{2}:?[0-9]{2})$"#),
        try! NSRegularExpression(
            pattern: #"^([0-9]{4})([0-9]{2})([0-9]{2})([0-9]{2})([0-9]{2})([0-9]{2})(Z|[+-][0-9]{2}:?[0-9]{2})$"#),
    ]

    /// What the reference makes of a date: its year, and its instant when Foundation's calendar can compute it
    /// (years from 1601, where the Gregorian calendar it uses is proleptic-equivalent).
    struct Parsed {
        var year: Int
        var instant: Timestamp?
    }

    static func parse(_ text: String) -> Parsed? {
        let ns = text as NSString
        guard
            let match = patterns.lazy.compactMap({
                $0.firstMatch(in: text, range: NSRange(location: 0, length: ns.length))
            }).first
        else { return nil }
        let fields = (1...6).map { Int(ns.substring(with: match.range(at: $0)))! }
        let zone = ns.substring(with: match.range(at: 7))
        var offset = 0
        if zone != "Z" {
            let digits = zone.filter(\.isNumber)
            let hours = Int(digits.prefix(2))!
            let minutes = Int(digits.suffix(2))!
            guard hours <= 18, minutes <= 59 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (zone.hasPrefix("-") ? -1 : 1)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let (year, month, day, hour, minute, second) = (
            fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
        )
        guard (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        // Day validity from the calendar itself: the range of days in that month of that year (leap years).
        var monthStart = DateComponents()
        (monthStart.year, monthStart.month, monthStart.day) = (max(year, 1601), month, 1)
        let days = calendar.date(from: monthStart).flatMap { calendar.range(of: .day, in: .month, for: $0) }
        let leapDay = year < 1601 && month == 2 && day == 29
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        guard let days, days.contains(day) || (leapDay && isLeap) else { return nil }
        guard year >= 1601 else { return Parsed(year: year, instant: nil) }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components) else { return nil }
        let seconds = Int64(date.timeIntervalSince1970.rounded()) - Int64(offset)
        return Parsed(year: year, instant: seconds * 1_000_000)
    }
}

/// The number grammar exports use (`[+-]digits[.digits][(e|E)[+-]digits]`, digits on at least one side of the
/// point), read by Swift's correctly rounded `Double(_:)`: a reference for the importer's decimal parser.
enum ReferenceDecimal {
    static let grammar = try! NSRegularExpression(pattern: #"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"#)

    static func parse(_ text: String) -> Double? {
        let range = NSRange(location: 0, length: (text as NSString).length)
        guard grammar.firstMatch(in: text, range: range) != nil else { return nil }
        return Double(text)
    }
}
