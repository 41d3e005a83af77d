import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthImport

/// Every element and attribute an export's own DTD declares is imported or counted as skipped by name: a
/// document built from the DTD (each declared element once in each place its parent's content allows, every
/// declared attribute set) is imported, and whatever ``ExportVocabulary`` does not keep must show in the summary.
@Suite("Export DTD coverage")
struct ExportDTDTests {
    /// One declared element: the elements its content model names and its attributes.
    struct Declaration {
        var children: [String] = []
        var attributes: [String] = []
    }

    /// The declarations of the `<!DOCTYPE … [ … ]>` subset in `text`.
    static func declarations(_ text: String) -> [String: Declaration] {
        var result: [String: Declaration] = [:]
        let scanner = text as NSString
        let element = try! NSRegularExpression(pattern: #"<!ELEMENT\s+(\w+)\s+([^>]*)>"#)
        for match in element.matches(in: text, range: NSRange(location: 0, length: scanner.length)) {
            let name = scanner.substring(with: match.range(at: 1))
            let content = scanner.substring(with: match.range(at: 2))
            let words = content.split { !($0.isLetter || $0.isNumber) }.map(String.init)
            result[name, default: Declaration()].children = words.filter { $0 != "EMPTY" && $0 != "PCDATA" }
        }
        let list = try! NSRegularExpression(pattern: #"<!ATTLIST\s+(\w+)([^>]*)>"#)
        for match in list.matches(in: text, range: NSRange(location: 0, length: scanner.length)) {
            let name = scanner.substring(with: match.range(at: 1))
            let lines = scanner.substring(with: match.range(at: 2)).split(separator: "\n")
            let names = lines.compactMap { $0.split(separator: " ").first.map(String.init) }
            result[name, default: Declaration()].attributes = names
        }
        return result
    }

    /// The DTD of the shared real export, read from its zip.
    static func sharedDTD() throws -> String {
        let source = try ExportSourceOpener.open(try ExportFile(path: Fixtures.realExportPath))
        var text: [UInt8] = []
        var chunk: [UInt8] = []
        while !String(decoding: text, as: UTF8.self).contains("]>"), try source.read(into: &chunk) {
            text += chunk
            chunk.removeAll()
        }
        let whole = String(decoding: text, as: UTF8.self)
        let end = try #require(whole.range(of: "]>"))
        return String(whole[..<end.upperBound])
    }

    /// A plausible value for `attribute` of `element` inside `parent`.
    static func value(_ attribute: String, of element: String, in parent: String) -> String {
        switch (element, attribute) {
        case ("Record", "type"):
            return parent == "Correlation"
                ? "HKQuantityTypeIdentifierDietaryEnergyConsumed" : "HKQuantityTypeIdentifierStepCount"
        case ("Record", "unit"): return parent == "Correlation" ? "kcal" : "count"
        case ("Correlation", "type"): return "HKCorrelationTypeIdentifierFood"
        case ("WorkoutEvent", "type"): return "HKWorkoutEventTypeLap"
        case ("WorkoutStatistics", "type"): return "HKQuantityTypeIdentifierActiveEnergyBurned"
        case ("WorkoutStatistics", "unit"), (_, "totalEnergyBurnedUnit"), (_, "activeEnergyBurnedUnit"): return "kcal"
        case (_, "totalDistanceUnit"): return "km"
        case (_, "durationUnit"): return "min"
        case (_, "workoutActivityType"): return "HKWorkoutActivityTypeRunning"
        case (_, "dateComponents"): return "2020-01-01"
        case ("Me", _): return ""
        case ("InstantaneousBeatsPerMinute", "time"): return "10:00:01.00 AM"
        case (_, "path"): return "/workout-routes/route_2020-01-01_10.00am.gpx"
        case (_, "key"): return "HKIndoorWorkout"
        case (_, let name) where name.hasSuffix("Date") || name == "date" || name == "dateIssued":
            return "2020-01-02 10:00:00 +0000"
        default: return "1"
        }
    }

    /// A document with each element `declarations` allow under `<HealthData>`, recursively, every attribute set.
    static func document(_ dtd: String, _ declarations: [String: Declaration]) -> String {
        func element(_ name: String, in parent: String, depth: Int) -> String {
            let declaration = declarations[name] ?? Declaration()
            let attributes = declaration.attributes.map { " \($0)=\"\(value($0, of: name, in: parent))\"" }.joined()
            let children = depth > 6 ? [] : declaration.children.filter { $0 != name }
            guard !children.isEmpty else { return "<\(name)\(attributes)/>\n" }
            return "<\(name)\(attributes)>\n"
                + children.map { element($0, in: name, depth: depth + 1) }.joined() + "</\(name)>\n"
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + dtd + "\n" + element("HealthData", in: "", depth: 1)
    }

    /// Checks that importing the document built from `dtd` counts every declared element and attribute it does
    /// not keep; returns how many places were checked.
    static func checkCoverage(of dtd: String) throws -> Int {
        let declarations = Self.declarations(dtd)
        #expect(
            declarations["HealthData"] != nil && declarations["Record"]?.attributes.contains("creationDate") == true)
        let summary = try Fixtures.importing(Array(document(dtd, declarations).utf8), name: "export.xml").summary
        // Only the route file the document names but does not carry may be refused.
        #expect(summary.rejected.allSatisfy { $0.reason.contains("route") }, "\(summary.rejected)")
        var checked = 0
        func visit(_ name: String, in parent: String, depth: Int) {
            let declaration = declarations[name] ?? Declaration()
            let kept: Set<String>? =
                name == "HealthData" ? [] : ExportVocabulary.keptAttributes(of: name, in: parent)
            guard let kept else {
                #expect(summary.skipped[name, default: 0] > 0, "<\(name)> in <\(parent)> is neither kept nor counted")
                checked += 1
                return
            }
            for attribute in declaration.attributes where !kept.contains(attribute) {
                #expect(
                    summary.skipped["\(name) \(attribute)", default: 0] > 0,
                    "\(name) \(attribute) is neither kept nor counted")
                checked += 1
            }
            checked += kept.count
            guard depth <= 6 else { return }
            for child in declaration.children where child != name { visit(child, in: name, depth: depth + 1) }
        }
        visit("HealthData", in: "", depth: 1)
        return checked
    }

    @Test("the shared export's DTD: nothing it declares is ignored without a count")
    func sharedExport() throws {
        #expect(try Self.checkCoverage(of: try Self.sharedDTD()) > 60)
    }

    @Test("a newer export's DTD (workout activities, statistics, audiograms, clinical records, prescriptions)")
    func newerExport() throws {
        let path = TestFixtures.packageRoot.appendingPathComponent("Tests/Fixtures/exports/dtd-ios17.xml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let end = try #require(text.range(of: "]>"))
        let dtd = String(text[..<end.upperBound])
        #expect(try Self.checkCoverage(of: dtd) > 80)
    }
}
