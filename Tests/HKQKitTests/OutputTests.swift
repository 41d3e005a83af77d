import Foundation
import Testing
import TestSupport

@testable import HKQKit

/// Output helpers: numbers, JSON, CSV, aligned tables and record sets.
@Suite struct OutputTests {
    @Test(arguments: [
        (37.0, "37"), (-40.0, "-40"), (0.0, "0"), (-0.0, "0"), (1609.344, "1609.344"), (1.2, "1.2"),
        (0.1 + 0.2, "0.30000000000000004"), (1e-6, "1e-06"), (1e15, "1000000000000000"), (1e16, "1e+16"),
        (-9_007_199_254_740_992, "-9007199254740992"),
        (Double.nan, "nan"), (Double.infinity, "inf"), (-Double.infinity, "-inf"), (5.5507, "5.5507"),
    ])
    func shortestNumbers(value: Double, text: String) {
        #expect(NumberFormat.shortest(value) == text)
        if value.isFinite { #expect(Double(text) == value) }
    }

    @Test func countsAgreeWithTheirNouns() {
        #expect(HumanFormat.count(1, "new sample") == "1 new sample")
        #expect(HumanFormat.count(2, "new sample") == "2 new samples")
        #expect(HumanFormat.count(0, "element") == "0 elements")
        #expect(HumanFormat.count(UInt64(1), "row") == "1 row")
        #expect(HumanFormat.count(1, "activity summary", plural: "activity summaries") == "1 activity summary")
        #expect(HumanFormat.count(3, "activity summary", plural: "activity summaries") == "3 activity summaries")
    }

    @Test(arguments: [
        (12.000000000000002, "12"), (-40.00000000000001, "-40"), (5.550748607260001, "5.55074860726"),
        (0.1 + 0.2, "0.3"), (1609.344, "1609.344"), (1e-20, "1e-20"), (1.2345678901234568e17, "1.23456789012346e+17"),
        (0, "0"), (Double.nan, "nan"), (-Double.infinity, "-inf"),
    ])
    func displayNumbersHideConversionNoise(value: Double, text: String) {
        #expect(NumberFormat.display(value) == text)
        if value.isFinite, value != 0 { #expect(abs(Double(text)! - value) <= 1e-14 * abs(value)) }
    }

    @Test("display agrees with rounding through Foundation's %.15g on random values of every magnitude")
    func displayMatchesFoundationRounding() {
        var random = SplitMix64(seed: 15)
        for _ in 0..<20_000 {
            let magnitude = Double(Int(random.next() % 60)) - 30
            let sign: Double = random.next() % 2 == 0 ? 1 : -1
            var value = sign * Double(random.next() % 1_000_000_007) / 1_000_000_007 * pow(10, magnitude)
            if random.next() % 4 == 0 { value = value.rounded() }
            let expected =
                value == 0 ? "0" : NumberFormat.shortest(Double(String(format: "%.15g", value)) ?? value)
            #expect(NumberFormat.display(value) == expected, "\(value)")
        }
    }

    @Test func jsonRenderingKeepsKeyOrderAndEscapes() {
        let value: JSONValue = .object([
            ("b", 1), ("a", .string("quote \" backslash \\ newline \n tab \t bell \u{07} é")),
            ("list", .array([.number(1.5), .bool(true), .null, .number(.nan)])), ("empty", .object([])),
        ])
        #expect(
            value.rendered
                == #"{"b":1,"a":"quote \" backslash \\ newline \n tab \t bell \u0007 é","list":[1.5,true,null,null],"empty":{}}"#
        )
        let decoded = try? JSONSerialization.jsonObject(with: Data(value.rendered.utf8)) as? [String: Any]
        #expect(decoded?["a"] as? String == "quote \" backslash \\ newline \n tab \t bell \u{07} é")
    }

    @Test func plainTextOfCells() {
        #expect(JSONValue.string("x,y").plainText == "x,y")
        #expect(JSONValue.null.plainText == "")
        #expect(JSONValue.integer(-12).plainText == "-12")
        #expect(JSONValue.number(72).plainText == "72")
        #expect(JSONValue.array(["a", 1]).plainText == #"["a",1]"#)
        #expect(JSONValue.integer(3).isNumber && !JSONValue.string("3").isNumber)
    }

    @Test(arguments: [
        ("plain", "plain"), ("a,b", #""a,b""#), (#"say "hi""#, #""say ""hi""""#), ("two\nlines", "\"two\nlines\""),
        (" padded", #"" padded""#), ("", ""),
    ])
    func csvEscaping(field: String, escaped: String) {
        #expect(CSV.escape(field) == escaped)
    }

    @Test("the CSV writer quotes as CSV.escape does and writes cells as plain text")
    func csvWriter() {
        var writer = CSVWriter()
        writer.line(["key", "a,b", " padded"])
        for cell: JSONValue in [
            .null, .number(1.5), .integer(-3), .bool(true), .string("say \"hi\""), .array([1, "x"]),
        ] {
            writer.field(cell)
        }
        writer.endLine()
        writer.endLine()
        #expect(
            writer.text
                == "key,\"a,b\",\" padded\"\n,1.5,-3,true,\"say \"\"hi\"\"\",\"[1,\"\"x\"\"]\"\n\n")
        #expect(CSV.line(["a", "b,c"]) == "a,\"b,c\"\n" && CSV.joined(["a", "", "b"]) == "a,,b")
    }

    @Test func textTableAlignsColumnsWithoutTrailingSpaces() {
        let table = TextTable(
            titles: ["NAME", "VALUE", "NOTE"], alignments: [.left, .right, .left],
            rows: [["a", "1", "x"], ["longer", "12345", ""]])
        #expect(
            table.rendered() == """
                NAME    VALUE  NOTE
                a           1  x
                longer  12345

                """)
    }

    static let records = RecordSet(
        columns: [.init("name", title: "NAME"), .init("secret", inTable: false), .init("value", title: "VALUE")],
        rows: [["steps", "s1", 1200], ["heart, rate", "s2", 72.5], ["none", .null, .null]])

    @Test func recordSetAsTable() {
        #expect(
            Self.records.rendered(as: .table) == """
                NAME         VALUE
                steps         1200
                heart, rate   72.5
                none

                """)
    }

    @Test func recordSetAsJSON() throws {
        let text = Self.records.rendered(as: .json)
        #expect(
            text == """
                [
                  {"name":"steps","secret":"s1","value":1200},
                  {"name":"heart, rate","secret":"s2","value":72.5},
                  {"name":"none","secret":null,"value":null}
                ]

                """)
        let decoded = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        #expect(decoded?.count == 3)
        #expect(RecordSet(columns: [.init("a")]).rendered(as: .json) == "[]\n")
    }

    @Test func recordSetAsCSV() {
        #expect(
            Self.records.rendered(as: .csv) == "name,secret,value\nsteps,s1,1200\n\"heart, rate\",s2,72.5\nnone,,\n")
    }

    @Test func recordSetAsFields() {
        let one = RecordSet(
            columns: [.init("unit", title: "UNIT"), .init("scale", title: "SCALE")], rows: [["kg", 1000]])
        #expect(one.renderedFields() == "UNIT   kg\nSCALE  1000\n")
        var two = one
        two.append(["g", 1])
        #expect(two.renderedFields() == "UNIT   kg\nSCALE  1000\n\nUNIT   g\nSCALE  1\n")
    }

    @Test func capturedConsoleCollectsBothStreams() {
        let (console, out, err) = Console.capturing()
        console.print("one")
        console.printBlock("two")
        console.printBlock("three\n")
        console.printBlock("")
        console.printError("oops")
        #expect(out.text == "one\ntwo\nthree\n")
        #expect(err.text == "oops\n")
    }
}
