import Foundation
import HealthClient
@testable import HealthImport
import TestSupport
import Testing

/// `hkq import` (the binary) into `hkd` (the binary): the real export, then again after a restart.
@Suite("hkq import against hkd", .serialized)
struct ExportImportTests {
    /// The real export, in Tests/Fixtures.
    static func realExport() throws -> String {
        let path = TestFixtures.realExportPath
        try #require(FileManager.default.fileExists(atPath: path), "the real export is missing: \(path)")
        return path
    }

    /// The JSON object hkq printed.
    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test("the real export is stored with its counts per type, and re-importing after a restart adds nothing")
    func realExportSurvivesRestart() async throws {
        let path = try Self.realExport()
        let hkd = try await TestServer()
        let server = hkd.hkqServer + ["--subject", "rob"]

        let first = try await HKQBinaryTests.hkq(server + ["import", path, "--format", "json"])
        #expect(first.status == 0, "\(first.err)")
        #expect(first.err.isEmpty, "no progress bar on a pipe: \(first.err)")
        let summary = try Self.object(first.out)
        #expect(summary["inserted"] as? Int == 26_070)
        #expect(summary["alreadyStored"] as? Int == 0)

        let info = try await hkd.client().serverInfo()
        let perType = Dictionary(uniqueKeysWithValues: info.samplesPerType.map { ($0.type, Int($0.samples)) })
        #expect(
            perType == [
                "distanceWalkingRunning": 12_371, "stepCount": 12_250, "flightsClimbed": 1_338, "bodyMass": 2,
                "height": 1, "bodyMassIndex": 1, "sleepAnalysis": 107,
            ])

        let day = ["--from", "2017-07-13T00:00:00-04:00", "--to", "2017-07-14T00:00:00-04:00"]
        let stats = try await HKQBinaryTests.hkq(server + ["stats", "stepCount", "--format", "json"] + day)
        #expect(try Self.object(stats.out)["sum"] as? Double == 16_393, "\(stats.out)\(stats.err)")

        #expect(await hkd.stop() == 0)
        let restarted = try await hkd.restart()
        let again = try await HKQBinaryTests.hkq(
            restarted.hkqServer + ["--subject", "rob", "import", path])
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("(0 new, 26070 already stored)"), "\(again.out)")
        let total = try await restarted.client().serverInfo().samplesPerType.reduce(0) { $0 + $1.samples }
        #expect(total == 26_070)
        await restarted.stop()
    }

    /// One export.xml of distance and energy records written in `distanceUnit` and `energyUnit`.
    static func unitExport(
        _ records: [(type: String, start: Int, value: Double)], distanceUnit: String,
        energyUnit: String, text: (Double, String) -> String
    ) -> String {
        var body = ""
        for record in records {
            let isDistance = record.type.hasSuffix("DistanceWalkingRunning")
            let unit = isDistance ? distanceUnit : energyUnit
            let start = Date(timeIntervalSince1970: Double(1_500_000_000 + record.start * 60))
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(secondsFromGMT: -4 * 3600)
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
            let from = formatter.string(from: start)
            let to = formatter.string(from: start.addingTimeInterval(60))
            body +=
                " <Record type=\"\(record.type)\" sourceName=\"Phillip\u{2019}s\u{A0}Apple Watch\" "
                + "unit=\"\(unit)\" creationDate=\"\(to)\" startDate=\"\(from)\" endDate=\"\(to)\" "
                + "value=\"\(text(record.value, unit))\"/>\n"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <ExportDate value="2018-04-15 22:29:28 -0400"/>
            \(body)</HealthData>

            """
    }

    @Test(
        "an export printed again in other units (mi for km, kJ for kcal, 6 digits each) adds nothing; rows of one file one printed digit apart stay two samples"
    )
    func reexportInOtherUnitsAddsNothing() async throws {
        var random = SplitMix64(seed: 0x1D_E771)
        let distance = "HKQuantityTypeIdentifierDistanceWalkingRunning"
        let energy = "HKQuantityTypeIdentifierActiveEnergyBurned"
        // Values as Apple prints them: 6 significant digits in miles and kilocalories.
        var records: [(type: String, start: Int, value: Double)] = []
        for minute in 0..<150 {
            let miles = Double(String(format: "%g", Double.random(in: 0.0001..<2, using: &random)))!
            records.append((distance, minute, miles))
            let kcal = Double(String(format: "%g", Double.random(in: 0.01..<40, using: &random)))!
            records.append((energy, minute, kcal))
        }
        // Same source, type and interval, values one digit apart in the 6th printed digit: distinct samples.
        records += [
            (distance, 500, 0.0278777), (distance, 500, 0.0278778), (energy, 500, 21.3471), (energy, 500, 21.3472),
        ]
        let factor: [String: Double] = ["km": 1.609344, "kJ": 4.184]
        let original = Self.unitExport(records, distanceUnit: "mi", energyUnit: "kcal") { value, _ in
            String(format: "%g", value)
        }
        // The other display units, printed as Apple prints them (6 digits): each value rounded again.
        let converted = Self.unitExport(records, distanceUnit: "km", energyUnit: "kJ") { value, unit in
            String(format: "%g", value * factor[unit]!)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("miles.xml")
        let second = directory.appendingPathComponent("kilometres.xml")
        try Data(original.utf8).write(to: first)
        try Data(converted.utf8).write(to: second)

        let hkd = try await HKDProcess()
        defer { try? FileManager.default.removeItem(atPath: hkd.dataDirectory) }
        let server = hkd.hkqServer + ["--subject", "phil"]
        let before = try await HKQBinaryTests.hkq(server + ["import", first.path, "--format", "json"])
        #expect(before.status == 0, "\(before.err)")
        #expect(try Self.object(before.out)["inserted"] as? Int == records.count, "\(before.out)")
        let after = try await HKQBinaryTests.hkq(server + ["import", second.path, "--format", "json"])
        #expect(after.status == 0, "\(after.err)")
        let summary = try Self.object(after.out)
        #expect(summary["inserted"] as? Int == 0, "\(after.out)")
        #expect(summary["alreadyStored"] as? Int == records.count, "\(after.out)")
        let total = try await hkd.client().serverInfo().samplesPerType.reduce(0) { $0 + $1.samples }
        #expect(total == records.count)
        await hkd.stop()
    }

    /// The real export's export.xml, with every distance record printed again in kilometres as Apple prints a value
    /// (6 significant digits), as if the person had switched the Health app's distance unit and exported again.
    static func realExportInKilometres() throws -> (xml: String, rewritten: Int) {
        let source = try ExportSourceOpener.open(try ExportFile(path: try realExport()))
        var bytes: [UInt8] = []
        while try source.read(into: &bytes) {}
        var xml = String(decoding: bytes, as: UTF8.self)
        let record = try Regex(
            #"(<Record type="HKQuantityTypeIdentifierDistanceWalkingRunning"[^>]*? )unit="mi"([^>]*? )value="([^"]+)""#)
        var rewritten = 0
        xml.replace(record) { match in
            rewritten += 1
            let miles = Double(String(match.output[3].substring!))!
            let kilometres = String(format: "%g", miles * 1.609344)
            return "\(match.output[1].substring!)unit=\"km\"\(match.output[2].substring!)value=\"\(kilometres)\""
        }
        return (xml, rewritten)
    }

    @Test("the real export printed again in kilometres adds no distance sample, and the total distance is unchanged")
    func realReexportInKilometresAddsNothing() async throws {
        let (xml, rewritten) = try Self.realExportInKilometres()
        #expect(rewritten == 12_371)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("km-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let kilometres = directory.appendingPathComponent("export.xml")
        try Data(xml.utf8).write(to: kilometres)

        let hkd = try await TestServer()
        defer { try? FileManager.default.removeItem(atPath: hkd.dataDirectory) }
        let server = hkd.hkqServer + ["--subject", "rob"]
        let first = try await HKQBinaryTests.hkq(server + ["import", try Self.realExport(), "--format", "json"])
        #expect(first.status == 0, "\(first.err)")
        let total = ["stats", "distanceWalkingRunning", "--unit", "km", "--format", "json"]
        let before = try Self.object(try await HKQBinaryTests.hkq(server + total).out)["sum"] as? Double
        let second = try await HKQBinaryTests.hkq(server + ["import", kilometres.path, "--format", "json"])
        #expect(second.status == 0, "\(second.err)")
        let summary = try Self.object(second.out)
        #expect(summary["inserted"] as? Int == 0, "\(second.out)")
        #expect(summary["alreadyStored"] as? Int == 26_070, "every record, its 107 sleep records too: \(second.out)")
        let after = try Self.object(try await HKQBinaryTests.hkq(server + total).out)["sum"] as? Double
        #expect(before != nil && after == before)
        await hkd.stop()
    }
}
