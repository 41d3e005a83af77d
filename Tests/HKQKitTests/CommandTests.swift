import Foundation
import HealthModel
import Testing

@testable import HKQKit

/// The real hkq commands, driven in-process.
@Suite struct CommandTests {
    @Test func helpListsEveryCommand() async {
        let result = await runHKQ(["--help"])
        #expect(result.status == 0)
        #expect(result.out.hasPrefix("OVERVIEW: Query, import, watch and administer an hkd health data server.\n"))
        for command in HKQ.commands {
            #expect(result.out.contains("\n  \(command.spec.name) "), "\(command.spec.name)")
        }
        #expect(result.out.contains("  -h, --help              Show help information.\n"))
        #expect(result.out.contains("  --version               Show the version (as the 'version' command).\n"))
        let viaHelp = await runHKQ(["help"])
        #expect(viaHelp.out == result.out)
        // Only the top level takes --version.
        let typesHelp = await runHKQ(["types", "--help"])
        #expect(!typesHelp.out.contains("--version"), "\(typesHelp.out)")
    }

    @Test func typesTable() async {
        let result = await runHKQ(["types"])
        #expect(result.status == 0)
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.count == QuantityType.all.count + 1)
        #expect(
            lines.first?.split(separator: " ", omittingEmptySubsequences: true) == [
                "IDENTIFIER", "UNIT", "STYLE", "KIND",
            ])
        let rows = lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first == ["stepCount", "count", "cumulative", "quantity"])
        #expect(rows.contains(["heartRate", "count/min", "discreteTemporallyWeighted", "quantity"]))
        #expect(rows.contains(["vo2Max", "mL/(kg*min)", "discreteArithmetic", "quantity"]))
        #expect(
            rows.contains(["environmentalAudioExposure", "dBASPL", "discreteEquivalentContinuousLevel", "quantity"]))
        // Category types have no unit: an empty cell.
        #expect(rows.contains(["sleepAnalysis", "category", "category"]))
        #expect(rows.filter { $0.last == "category" }.count == QuantityType.categories.count)
        // Columns are aligned: every quantity line's columns start where the header's do.
        let headerStarts = Self.columnStarts(lines[0])
        #expect(headerStarts.count == 3)
        for line in lines.prefix(QuantityType.quantities.count + 1) {
            #expect(Self.columnStarts(line) == headerStarts, "\(line)")
        }
        for line in lines.dropFirst(QuantityType.quantities.count + 1) {
            #expect(Self.columnStarts(line) == Array(headerStarts.dropFirst()), "\(line)")
        }
    }

    /// Offsets where a cell starts after a gap of two or more spaces.
    static func columnStarts(_ line: String) -> [Int] {
        let characters = Array(line)
        return characters.indices.filter { index in
            index >= 2 && characters[index] != " " && characters[index - 1] == " " && characters[index - 2] == " "
        }
    }

    @Test func typesJSON() async throws {
        let result = await runHKQ(["types", "--format", "json"])
        #expect(result.status == 0)
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [[String: Any]])
        #expect(objects.count == QuantityType.all.count)
        for (object, type) in zip(objects, QuantityType.all) {
            #expect(Set(object.keys) == ["identifier", "fullIdentifier", "unit", "style", "kind", "values"])
            #expect(object["identifier"] as? String == type.identifier)
            #expect(object["fullIdentifier"] as? String == type.fullIdentifier)
            #expect(object["unit"] as? String == (type.isCategory ? "" : type.canonicalUnit.symbol))
            #expect(object["style"] as? String == type.style.description)
            #expect(object["kind"] as? String == (type.isCategory ? "category" : "quantity"))
            if let enumeration = type.categoryValues {
                // A list of the values, each with its name and raw value, never one string.
                let values = try #require(object["values"] as? [[String: Any]], "\(type.identifier)")
                #expect(values.map { $0["name"] as? String } == enumeration.values.map(\.name))
                #expect(values.map { $0["rawValue"] as? Int } == enumeration.values.map(\.rawValue))
                #expect(values.allSatisfy { Set($0.keys) == ["name", "rawValue"] })
            } else {
                #expect(object["values"] is NSNull, "a quantity type has no values: \(type.identifier)")
            }
        }
        #expect(
            result.out.contains(
                #""kind":"category","values":[{"name":"stood","rawValue":0},{"name":"idle","rawValue":1}]}"#),
            "\(result.out)")
        #expect(result.out.contains(#""kind":"quantity","values":null}"#))
        #expect(
            result.out.hasPrefix(
                "[\n  {\"identifier\":\"stepCount\",\"fullIdentifier\":\"HKQuantityTypeIdentifierStepCount\","))
    }

    @Test func typesCSV() async {
        let result = await runHKQ(["--format=csv", "types"])
        let lines = result.out.split(separator: "\n")
        #expect(lines.first == "identifier,fullIdentifier,unit,style,kind,values")
        #expect(lines.dropFirst().first == "stepCount,HKQuantityTypeIdentifierStepCount,count,cumulative,quantity,")
        #expect(
            lines.contains(
                "appleStandHour,HKCategoryTypeIdentifierAppleStandHour,,category,category,\"stood 0, idle 1\""))
        #expect(lines.count == QuantityType.all.count + 1)
    }

    @Test(arguments: [
        (["1", "mi", "m"], "1609.344"), (["98.6", "degF", "degC"], "37"), (["72", "count/min", "count/s"], "1.2"),
        (["50", "%", "count"], "0.5"), (["1", "lb", "g"], "453.59237"), (["1", "Cal", "kJ"], "4.184"),
        (["100", "mg/dL", "mmol<180.15588000005408>/L"], "5.55074860726"), (["-40", "degC", "K"], "233.15"),
        (["-40", "degC", "degF"], "-40"), (["0", "degC", "degF"], "32"), (["1", "ft", "in"], "12"),
        (["7", "ft", "ft"], "7"),
        (["2", "s^-1", "Hz"], "2"), (["1e3", "mcg", "mg"], "1"), (["1", "kg/m.s^2", "kg/(m.s^2)"], "1"),
    ])
    func unitsConvertPrintsTheNumberAlone(arguments: [String], expected: String) async {
        let result = await runHKQ(["units", "convert"] + arguments)
        #expect(result.status == 0)
        #expect(result.out == expected + "\n")
        #expect(result.err == "")
    }

    @Test func unitsConvertAsJSONKeepsTheExactValue() async {
        let result = await runHKQ(["units", "convert", "1", "mi", "m", "--format", "json"])
        #expect(result.out == #"{"value":1609.344,"unit":"m"}"# + "\n")
        let noisy = await runHKQ(["units", "convert", "1", "ft", "in", "--format=json"])
        #expect(noisy.out == #"{"value":12.000000000000002,"unit":"in"}"# + "\n")
    }

    @Test(
        arguments: [
            (["1", "kg", "count"], 65, #"error: cannot convert from "kg" (mass) to "count" (dimensionless)"#),
            (["1", "m//s", "m"], 65, #"error: cannot parse unit "m//s": more than one "/""#),
            (["1", "m", "furlong"], 65, #"error: cannot parse unit "furlong": unknown unit "furlong""#),
            (["abc", "kg", "g"], 64, "error: invalid value 'abc' for '<value>'; expected a number"),
            (["nan", "kg", "g"], 64, "error: invalid value 'nan' for '<value>'; expected a number"),
            (["1", "kg"], 64, "error: missing argument '<to>'"),
        ] as [([String], Int32, String)])
    func unitsConvertErrors(arguments: [String], status: Int32, firstLine: String) async {
        let result = await runHKQ(["units", "convert"] + arguments)
        #expect(result.status == status)
        #expect(result.out == "")
        #expect(result.err.split(separator: "\n").first.map(String.init) == firstLine)
    }

    @Test func unitsShow() async throws {
        let table = await runHKQ(["units", "show", "mg/dL"])
        #expect(table.status == 0)
        #expect(
            table.out == """
                UNIT       mg/dL
                DIMENSION  mass·length^-3
                BASE       g·m^-3
                SCALE      10
                OFFSET     0

                """)
        let json = await runHKQ(["units", "show", "degF", "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["base"] as? String == "K")
        #expect(abs((object["offset"] as? Double ?? 0) - 255.372_222_222) < 1e-6)
        let bad = await runHKQ(["units", "show", "m^"])
        #expect(bad.status == 65)
        #expect(bad.err == "error: cannot parse unit \"m^\": \"^\" needs an integer exponent\n")
    }

    @Test func hkqMainIsTheStandardProgram() async {
        let (console, out, _) = Console.capturing()
        let status = await hkqMain(
            arguments: ["units", "convert", "1", "ft", "in"], environment: [:], console: console)
        #expect(status == 0)
        #expect(out.text == "12\n")
    }
}
