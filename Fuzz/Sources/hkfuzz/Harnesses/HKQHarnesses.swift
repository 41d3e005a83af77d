import Foundation
import HKQKit
import HealthModel

/// hkq's readers of user-written text: the CSV and JSON-lines rows of `hkq insert`, and date arguments.
enum HKQHarnesses {
    /// Reads a whole sample file as `hkq insert` would, through a scratch file: every row either becomes a sample
    /// or fails with an error naming its line. Bounded by the input's line count, so it always ends.
    static func readAll(_ bytes: [UInt8], format: SampleFileFormat, file: ScratchFile) {
        file.write(bytes)
        guard let reader = attempt({ try SampleFileReader(path: file.path, format: format, subject: "anna") }) else {
            return
        }
        let lines = bytes.reduce(1) { $0 + ($1 == 10 ? 1 : 0) }
        for _ in 0...lines {
            do {
                guard try reader.next() != nil else { return }
            } catch let error as ImportError {
                require(error.line != nil || error.message.contains("longer"), "a row error without its line: \(error)")
            } catch {
                require(false, "a row failed with \(type(of: error)), not an ImportError")
            }
        }
        require(attempt({ try reader.next() }) == nil, "more rows than lines")
    }

    /// The scratch files, one per format (a fuzzing process runs one harness on one thread).
    static let csvFile = ScratchFile(ext: "csv")
    static let jsonFile = ScratchFile(ext: "jsonl")

    /// The input is a CSV file. Besides reading it, every line's fields must survive ``CSV/line(_:)`` and
    /// ``CSV/fields(_:)`` unchanged.
    static let csv = Harness(
        "csv", "hkq insert's CSV rows via SampleFileReader; CSV.fields/CSV.line round trip",
        seeds: {
            [
                "type,start,end,value,unit,source,uuid\nstepCount,2024-03-10T08:00:00-05:00,2024-03-10T08:01:00-05:00,12,count,Watch,\n",
                "start,type,value,end,source,unit\n2024-03-10 08:00Z,heartRate,61,,\"Anna's \"\"Watch\"\", v2\",count/min\n",
            ].map { Array($0.utf8) }
        }
    ) { input in
        let bytes = input.rest()
        readAll(bytes, format: .csv, file: csvFile)
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            guard let fields = CSV.fields(String(line)) else { continue }
            let again = CSV.fields(String(CSV.line(fields).dropLast()))
            require(again == fields, "CSV fields \(fields) come back as \(again as Any)")
        }
    }

    /// The input is a JSON-lines file.
    static let jsonLines = Harness(
        "jsonl", "hkq insert's JSON-lines rows via SampleFileReader",
        seeds: {
            [
                #"{"type":"stepCount","start":"2024-03-10T08:00:00-05:00","end":"2024-03-10T08:01:00-05:00","value":12,"unit":"count","source":"Watch"}"#
                    + "\n"
                    + #"{"type":"bodyMass","start":"2024-03-10T08:00:00Z","value":"70.5","unit":"kg","source":"Scale","uuid":"6F9619FF-8B86-D011-B42D-00C04FC964FF"}"#
            ].map { Array($0.utf8) }
        }
    ) { input in
        readAll(input.rest(), format: .jsonl, file: jsonFile)
    }

    /// A fixed clock and zone for relative dates.
    static let dateParser = DateArgumentParser(
        timeZone: TimeZone(identifier: "America/New_York")!, now: 1_710_072_000_000_000)
    static let utc = TimestampFormatter(timeZone: TimeZone(identifier: "UTC")!)

    /// The input is a date argument. An instant parsed from ISO 8601 text must print (in UTC) as text that parses
    /// to the same instant.
    static let dates = Harness(
        "dates", "ISO8601Text and DateArgumentParser (hkq dates and CSV times); print/parse round trip",
        seeds: {
            [
                "2024-03-10T08:00:00-05:00", "2024-03-10 08:00:00.250+05:30", "2024-03-10", "now-7d", "yesterday",
                "2024-03-10T02:30:00", "2024-11-03T01:30", "2024-02-29T23:59:59.999999z",
            ].map { Array($0.utf8) }
        }
    ) { input in
        let text = String(decoding: input.rest(), as: UTF8.self)
        _ = dateParser.parse(text)
        guard let instant = ISO8601Text.timestamp(text) else { return }
        let printed = utc.iso8601(instant)
        require(ISO8601Text.timestamp(printed) == instant, "\"\(text)\" is \(instant), printed \"\(printed)\"")
    }
}
