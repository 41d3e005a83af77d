import Foundation
import HealthModel
import Testing

@testable import HealthImport

/// The real export in `Tests/Fixtures/apple-health-export-mit` (26,070 records). Expected numbers were computed once,
/// independently, with `unzip -p … | grep -c` and a short Python script over the XML.
@Suite("Real export")
struct RealExportTests {
    /// The path of the shared export, or a failed requirement naming where it was looked for.
    static func exportPath() throws -> String {
        let path = Fixtures.realExportPath
        try #require(
            FileManager.default.fileExists(atPath: path),
            "the real export is missing: expected it at \(path)")
        return path
    }

    /// One import of the file shared by the tests that only read its result (debug builds parse slowly).
    static let shared = Result { try importAll() }

    static func importAll(options: ImportOptions = ImportOptions(), progress: ((ImportProgress) -> Void)? = nil)
        throws -> (batches: [SampleBatch], summary: ImportSummary)
    {
        var batches: [SampleBatch] = []
        let importer = ExportImporter(path: try exportPath(), subject: "rob", options: options)
        let summary = try importer.run(progress: progress) { batches.append($0) }
        return (batches, summary)
    }

    @Test("counts per type, skipped kinds and records seen match the file")
    func counts() throws {
        let (batches, summary) = try Self.shared.get()
        #expect(summary.recordsSeen == 26_070)
        #expect(
            summary.imported == [
                "distanceWalkingRunning": 12_371, "stepCount": 12_250, "flightsClimbed": 1_338, "bodyMass": 2,
                "height": 1, "bodyMassIndex": 1, "sleepAnalysis": 107,
            ])
        #expect(summary.skipped == ["ExportDate": 1, "HealthData locale": 1])
        #expect(summary.characteristicElements == 1)
        #expect(summary.rejected.isEmpty)
        #expect(summary.importedCount == 26_070)
        #expect(summary.importedCategoryCount == 107)
        #expect(batches.reduce(0) { $0 + $1.count } == 26_070)
        #expect(summary.batches == batches.count)
        #expect(summary.bytesRead == 596_018)
        #expect(summary.xmlBytes == 9_720_225)
    }

    @Test("batches hold at most 10,000 rows of one type, in its canonical unit")
    func batchShape() throws {
        let (batches, _) = try Self.shared.get()
        var units: [String: Set<String>] = [:]
        for batch in batches {
            #expect(batch.count <= 10_000)
            #expect(batch.count > 0)
            #expect(batch.subject == "rob")
            #expect(batch.uuids?.count == batch.count)
            try batch.validateShape()
            units[batch.typeIdentifier, default: []].insert(batch.unit)
        }
        #expect(
            units == [
                "distanceWalkingRunning": ["m"], "stepCount": ["count"], "flightsClimbed": ["count"],
                "bodyMass": ["kg"], "height": ["m"], "bodyMassIndex": ["count"], "sleepAnalysis": [""],
            ])
        let stepBatches = batches.filter { $0.typeIdentifier == "stepCount" }.map(\.count)
        #expect(stepBatches == [10_000, 2_250])
    }

    @Test("daily step sums in the phone's -04:00 offset match an independent computation")
    func dailySteps() throws {
        let rows = Fixtures.rows(try Self.shared.get().batches)
        let steps = rows.filter { $0.type == "stepCount" }
        func stepsOn(_ year: Int, _ month: Int, _ day: Int) -> Double {
            let start = Fixtures.instant(year, month, day, offsetHours: -4)
            let end = start + Micros.day
            return steps.filter { $0.start >= start && $0.start < end }.reduce(0) { $0 + $1.value }
        }
        #expect(stepsOn(2016, 2, 25) == 1_391)
        #expect(stepsOn(2017, 7, 13) == 16_393)
        #expect(stepsOn(2018, 4, 14) == 2_079)
        #expect(steps.reduce(0) { $0 + $1.value } == 1_856_210)

        let distance = rows.filter { $0.type == "distanceWalkingRunning" }
        let day = Fixtures.instant(2017, 1, 21, offsetHours: -4)
        let metres = distance.filter { $0.start >= day && $0.start < day + Micros.day }.reduce(0) { $0 + $1.value }
        // 1.72849583 mi, each record rounded to 9 significant digits in metres.
        #expect(abs(metres - 1.72849583 * 1609.344) < 1e-5)
    }

    @Test("manual entries keep their values, sources, instants and metadata")
    func manualEntries() throws {
        let rows = Fixtures.rows(try Self.shared.get().batches)
        let mass = rows.filter { $0.type == "bodyMass" }
        // 172 lb and 174 lb, in kg to 9 significant digits.
        #expect(mass.map(\.value) == [78.0178876, 78.9250724])
        #expect(mass.map(\.unit) == ["kg", "kg"])
        #expect(mass[0].start == Fixtures.instant(2016, 12, 14, 11, 12, 54, offsetHours: -4))
        #expect(mass[0].source == SourceInfo(name: "Health", version: "10.1.1"))
        #expect(mass[1].metadata == ["HKWasUserEntered": .number(1)])
        let bmi = try #require(rows.first { $0.type == "bodyMassIndex" })
        #expect(bmi.value == 22.96)
        let height = try #require(rows.first { $0.type == "height" })
        #expect(height.value == 1.85419898 && height.unit == "m", "6.08333 ft")
    }

    @Test("the two iPhones under one source name keep their hardware as the device")
    func devices() throws {
        let rows = Fixtures.rows(try Self.shared.get().batches)
        let devices = Set(rows.filter { $0.source.name == "iphone" }.map(\.source.device))
        #expect(devices == ["iPhone6,1", "iPhone7,2"])
        let first = try #require(rows.first { $0.type == "stepCount" })
        #expect(first.source == SourceInfo(name: "iphone", version: "9.2.1", device: "iPhone6,1"))
        #expect(first.start == Fixtures.instant(2016, 2, 24, 23, 32, 24, offsetHours: -4))
        #expect(first.end == Fixtures.instant(2016, 2, 24, 23, 36, 19, offsetHours: -4))
        #expect(first.value == 13)
    }

    @Test("a second read gives the same UUIDs and batch ids; every sample has its own UUID")
    func deterministic() throws {
        let first = try Self.shared.get().batches
        let second = try Self.importAll().batches
        #expect(first.map(\.batchID) == second.map(\.batchID))
        #expect(first.map { $0.uuids ?? [] } == second.map { $0.uuids ?? [] })
        #expect(first == second)
        let uuids = first.flatMap { $0.uuids ?? [] }
        // The file holds 25,963 distinct (type, source, unit, start, end, value) quantity records and 107 distinct
        // sleep records.
        #expect(Set(uuids).count == 26_070)
        #expect(Set(first.map(\.batchID)).count == first.count)
        #expect(uuids.allSatisfy { $0.uuid.6 >> 4 == 8 && $0.uuid.8 >> 6 == 2 })
    }

    @Test("progress grows to the compressed size and the record count")
    func progress() throws {
        var reports: [ImportProgress] = []
        let (_, summary) = try Self.importAll(options: ImportOptions(progressInterval: 64 * 1024)) {
            reports.append($0)
        }
        #expect(reports.count >= 5)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesRead <= $1.bytesRead })
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.recordsSeen <= $1.recordsSeen })
        let last = try #require(reports.last)
        #expect(last.bytesRead == 596_018 && last.totalBytes == 596_018 && last.fraction == 1)
        #expect(last.recordsSeen == summary.recordsSeen)
        #expect(last.samplesImported == 26_070)
        #expect(reports.dropLast().allSatisfy { $0.fraction < 1 })
    }

    @Test("the unzipped export.xml imports to the same batches as the zip")
    func plainXML() throws {
        let directory = try Fixtures.TemporaryDirectory()
        let entry = try #require(try ZipDirectory.findExport(in: ExportFile(path: try Self.exportPath())))
        let zipped = try ExportFile(path: try Self.exportPath())
        let source = try ZipEntryByteSource(file: zipped, entry: entry)
        var xml: [UInt8] = []
        while try source.read(into: &xml) {}
        #expect(xml.count == 9_720_225)
        let path = try directory.write(xml, name: "export.xml")
        var batches: [SampleBatch] = []
        let summary = try ExportImporter(path: path, subject: "rob").run { batches.append($0) }
        #expect(batches == (try Self.shared.get().batches))
        #expect(summary.bytesRead == 9_720_225)
    }
}
