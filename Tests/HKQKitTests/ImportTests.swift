import Foundation
import HealthModel
import Testing

@testable import HKQKit

/// CSV fields, input-file reading and row validation, without a server.
@Suite struct ImportTests {
    @Test(
        arguments: [
            ("a,b,c", ["a", "b", "c"]), ("", [""]), ("a,,", ["a", "", ""]),
            (#""Anna's Watch, Series 9",b"#, ["Anna's Watch, Series 9", "b"]),
            (#""say ""hi""",x"#, [#"say "hi""#, "x"]), (#""","#, ["", ""]), (" a , b", [" a ", " b"]),
            (#"a"b,c"#, [#"a"b"#, "c"]), (",", ["", ""]), ("é,ü ,", ["é", "ü ", ""]),
        ] as [(String, [String])])
    func csvFieldsParse(line: String, expected: [String]) {
        #expect(CSV.fields(line) == expected)
    }

    @Test(arguments: [#""open"#, #""closed"x,y"#])
    func malformedCSVIsRejected(line: String) {
        #expect(CSV.fields(line) == nil)
    }

    @Test func escapedFieldsParseBack() {
        let fields = ["plain", "with, comma", #"with "quotes""#, " padded ", ""]
        #expect(CSV.fields(String(CSV.line(fields).dropLast())) == fields)
    }

    /// Writes `text` to a temporary file named `name`, reads every sample, removes the file.
    static func read(_ name: String, _ text: String, format: SampleFileFormat? = nil) throws -> (
        SampleFileFormat, [Sample]
    ) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)-\(name)")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let reader = try SampleFileReader(path: url.path, format: format, subject: "anna")
        var samples: [Sample] = []
        while let sample = try reader.next() { samples.append(sample) }
        return (reader.format, samples)
    }

    /// The error reading `text` gives, with the temporary file name replaced by `FILE`.
    static func failure(_ name: String, _ text: String) throws -> String {
        do {
            _ = try read(name, text)
        } catch let error as ImportError {
            var error = error
            error.file = "FILE"
            return error.description
        }
        Issue.record("no error for \(text)")
        return ""
    }

    @Test func csvRowsBecomeSamples() throws {
        let text = """
            \u{FEFF}source,unit,value,end,start,type,uuid
            "Anna's Watch, Series 9",km,1.5,2024-03-10T08:10:00-05:00,2024-03-10T08:00:00-05:00,distanceWalkingRunning,\r

            iPhone,,12,,2024-03-10T13:00:00.5Z,HKQuantityTypeIdentifierStepCount,E621E1F8-C36C-495A-93FC-0C247A3E6E5F
            """
        let (format, samples) = try Self.read("walk.csv", text)
        #expect(format == .csv)
        #expect(samples.count == 2)
        let distance = try #require(samples.first)
        #expect(distance.type.identifier == "distanceWalkingRunning")
        #expect(distance.source.name == "Anna's Watch, Series 9")
        // A derived UUID: sent as the canonical value it names (IdentityValue).
        #expect(distance.unit.symbol == "m" && distance.value == 1500 && distance.subject == "anna")
        #expect(distance.start == 1_710_075_600_000_000 && distance.end == 1_710_076_200_000_000)
        let steps = try #require(samples.last)
        #expect(steps.type.identifier == "stepCount" && steps.unit.symbol == "count")
        #expect(steps.start == 1_710_075_600_500_000 && steps.end == steps.start)
        #expect(steps.uuid.uuidString == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    }

    @Test func jsonLinesAreDetectedByExtensionAndByContent() throws {
        let text = """
            {"type":"heartRate","start":"2024-03-10T08:00:00-05:00","end":"2024-03-10T08:00:00-05:00","value":72,"unit":"count/min","source":"Watch"}

            {"type":"heartRate","start":"2024-03-10T08:01:00-05:00","value":"1.25","unit":"count/s","source":"Watch"}
            """
        for name in ["hr.jsonl", "hr.json", "hr.txt"] {
            let (format, samples) = try Self.read(name, text)
            #expect(format == .jsonl, "\(name)")
            #expect(samples.map(\.value) == [72, 75])
            #expect(samples.map(\.unit.symbol) == ["count/min", "count/min"])
        }
        let csvByContent = try Self.read(
            "steps.txt", "type,start,end,value,unit,source\nstepCount,2024-03-10T08:00:00Z,,5,,a\n")
        #expect(csvByContent.0 == .csv && csvByContent.1.count == 1)
        let forced = try Self.read("steps.data", "type,start,end,value,unit,source\n", format: .csv)
        #expect(forced.0 == .csv && forced.1.isEmpty)
    }

    @Test func rowsWithoutUUIDGetOneDerivedFromTheirContent() throws {
        let text =
            "type,start,end,value,unit,source\nstepCount,2024-03-10T08:00:00Z,,5,,a\nstepCount,2024-03-10T08:00:00Z,,6,,a\n"
        let first = try Self.read("a.csv", text).1
        let second = try Self.read("b.csv", text).1
        #expect(first.map(\.uuid) == second.map(\.uuid))
        #expect(first[0].uuid != first[1].uuid)
        #expect(first[0].uuid.uuidString.dropFirst(14).first == "8")  // version 8
    }

    @Test func anEmptyValueIsNotApplicableOnlyWhereThatIsTheTypesOnlyValue() throws {
        let text = Self.header + "mindfulSession,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,,,Breathe\n"
        let samples = try Self.read("calm.csv", text).1
        #expect(samples.map(\.value) == [0])
        #expect(samples.first?.type.identifier == "mindfulSession")
        let named = try Self.read("named.csv", text.replacingOccurrences(of: ",,,", with: ",notApplicable,,")).1
        #expect(named.map(\.uuid) == samples.map(\.uuid))
        let jsonl = #"{"type":"toothbrushingEvent","start":"2024-03-10T08:00:00Z","value":"","source":"a"}"#
        #expect(try Self.read("teeth.jsonl", jsonl).1.map(\.value) == [0])
        let sleep = try Self.failure(
            "sleep.csv", Self.header + "sleepAnalysis,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,,,Watch\n")
        #expect(sleep.hasPrefix(#"FILE line 2: value "" is not a value of category type sleepAnalysis"#), "\(sleep)")
    }

    static let header = "type,start,end,value,unit,source\n"
    static let good = "stepCount,2024-03-10T08:00:00Z,2024-03-10T08:10:00Z,5,count,a\n"

    @Test(
        arguments: [
            (
                header + good + "stepCont,2024-03-10T08:00:00Z,,5,,a\n",
                #"FILE line 3: unknown quantity type "stepCont"; did you mean "stepCount"?"#
            ),
            (
                header + good + good + "stepCount,2024-03-10T08:00:00Z,,5,kg,a\n",
                #"FILE line 4: unit "kg" is not compatible with stepCount (count)"#
            ),
            (
                header + "stepCount,2024-03-10T08:00:00Z,,5,furlong,a\n",
                #"FILE line 2: cannot parse unit "furlong": unknown unit "furlong""#
            ),
            (
                header + "stepCount,2024-03-10T09:00:00Z,2024-03-10T08:00:00Z,5,,a\n",
                "FILE line 2: start 2024-03-10T09:00:00Z is after end 2024-03-10T08:00:00Z"
            ),
            (
                header + "stepCount,2024-03-10T08:00:00,,5,,a\n",
                #"FILE line 2: start "2024-03-10T08:00:00" is not an ISO 8601 date-time with an offset, e.g. 2024-03-10T08:00:00-05:00"#
            ),
            (header + "stepCount,2024-03-10T08:00:00Z,,five,,a\n", #"FILE line 2: value "five" is not a number"#),
            (
                header + "stepCount,2024-03-10T08:00:00Z,,-5,,a\n",
                "FILE line 2: stepCount is cumulative and cannot take the negative value -5.0"
            ),
            (header + "stepCount,2024-03-10T08:00:00Z,,5,,\n", "FILE line 2: the source is empty"),
            (
                header + "\n\nstepCount,2024-03-10T08:00:00Z,,5,\n",
                "FILE line 4: expected 6 fields as in the header, found 5"
            ),
            (
                header + #"stepCount,2024-03-10T08:00:00Z,,5,,"open"# + "\n",
                "FILE line 2: malformed CSV (a quote is not closed, or text follows a closing quote)"
            ),
            (
                "type,start,value,source\n" + good,
                "FILE line 1: the CSV header lacks end, unit; expected the columns type,start,end,value,unit,source[,uuid]"
            ),
            (
                header + "stepCount,2024-03-10T08:00:00Z,,5,,a,\n",
                "FILE line 2: expected 6 fields as in the header, found 7"
            ),
            (
                header + "stepCount,2024-03-10T08:00:00Z,,5,,a\nx",
                "FILE line 3: expected 6 fields as in the header, found 1"
            ),
        ] as [(String, String)])
    func badCSVRowsNameTheirLine(text: String, expected: String) throws {
        #expect(try Self.failure("bad.csv", text) == expected)
    }

    @Test(
        arguments: [
            (
                #"{"type":"stepCount","start":"2024-03-10T08:00:00Z","value":5,"source":"a"}"# + "\n{oops\n",
                "FILE line 2: not a JSON object"
            ),
            (#"[{"type":"stepCount"}]"#, "FILE line 1: not a JSON object; write one object per line (JSON lines)"),
            (
                #"{"type":"stepCount","start":"2024-03-10T08:00:00Z","source":"a"}"#,
                #"FILE line 1: missing key "value""#
            ),
            (
                #"{"type":"stepCount","start":1710057600,"value":5,"source":"a"}"#,
                #"FILE line 1: key "start" is not a string"#
            ),
            (
                #"{"type":"heartRate","start":"2024-03-10T08:00:00Z","value":5,"unit":"kg","source":"a"}"#,
                #"FILE line 1: unit "kg" is not compatible with heartRate (count/min)"#
            ),
            (
                #"{"type":"stepCount","start":"2024-03-10T08:00:00Z","value":5,"source":"a","uuid":"nope"}"#,
                #"FILE line 1: uuid "nope" is not a UUID"#
            ),
        ] as [(String, String)])
    func badJSONLinesNameTheirLine(text: String, expected: String) throws {
        #expect(try Self.failure("bad.jsonl", text) == expected)
    }

    @Test func aMissingFileIsReported() {
        #expect(throws: ImportError(file: "/nonexistent/x.csv", line: nil, message: "cannot open the file for reading"))
        {
            _ = try SampleFileReader(path: "/nonexistent/x.csv", format: nil, subject: "anna")
        }
    }

    @Test func linesStreamThroughChunkBoundaries() throws {
        let rows = (0..<20_000).map {
            "stepCount,2024-03-10T08:00:\(String(format: "%02d", $0 % 60))Z,,\($0),,src\($0 % 3)"
        }
        let (_, samples) = try Self.read("many.csv", Self.header + rows.joined(separator: "\n"))
        #expect(samples.count == 20_000)
        #expect(samples.last?.value == 19_999)
        #expect(samples[12_345].source.name == "src0")
    }
}
