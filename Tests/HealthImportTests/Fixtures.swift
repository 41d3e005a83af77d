import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthImport

/// Builds export documents and files, and runs imports over them.
enum Fixtures {
    /// The real export, in Tests/Fixtures.
    static var realExportPath: String { TestFixtures.realExportPath }

    /// A complete export.xml around `body` (records and other top-level elements), shaped like a real one.
    static func document(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 7 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!-- Note: a comment holding ] and > characters -->
        ]>
        <HealthData locale="en_US">
         <ExportDate value="2018-04-15 22:29:28 -0400"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1984-05-01"/>
        \(body)
        </HealthData>

        """
    }

    /// One `<Record>` line; `children` goes between its tags (self-closing when empty).
    static func record(
        type: String = "HKQuantityTypeIdentifierStepCount", unit: String? = "count", value: String? = "10",
        start: String = "2017-01-21 15:53:00 -0400", end: String = "2017-01-21 15:58:00 -0400",
        source: String = "iphone", extra: String = "", children: String = ""
    ) -> String {
        var text = " <Record type=\"\(type)\" sourceName=\"\(source)\" sourceVersion=\"10.2\""
        if let unit { text += " unit=\"\(unit)\"" }
        text += " creationDate=\"\(start)\" startDate=\"\(start)\" endDate=\"\(end)\""
        if let value { text += " value=\"\(value)\"" }
        text += extra
        return children.isEmpty ? text + "/>" : text + ">\n" + children + "\n </Record>"
    }

    /// A fresh temporary directory, removed by `cleanup`.
    final class TemporaryDirectory {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("hkimport-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: url) }

        /// Writes `bytes` to `name` inside the directory and returns its path.
        func write(_ bytes: [UInt8], name: String) throws -> String {
            let path = url.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    /// A zip holding `xml` as apple_health_export/export.xml (plus the CDA file real exports have).
    static func zip(_ xml: String, method: UInt16 = 8, zip64: Bool = false) -> [UInt8] {
        ZipWriter.archive(
            [
                .init(name: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                .init(name: "apple_health_export/export.xml", data: Array(xml.utf8), method: method),
            ], zip64: zip64)
    }

    /// Imports `bytes` written to a file called `name`; returns every batch and the summary.
    static func importing(
        _ bytes: [UInt8], name: String = "export.zip", subject: String = "anna",
        options: ImportOptions = ImportOptions()
    ) throws -> (batches: [SampleBatch], summary: ImportSummary) {
        let directory = try TemporaryDirectory()
        let path = try directory.write(bytes, name: name)
        var batches: [SampleBatch] = []
        let summary = try ExportImporter(path: path, subject: subject, options: options).run { batches.append($0) }
        return (batches, summary)
    }

    /// Imports the document around `body` as a plain export.xml.
    static func importing(body: String, options: ImportOptions = ImportOptions()) throws -> (
        batches: [SampleBatch], summary: ImportSummary
    ) {
        try importing(Array(document(body).utf8), name: "export.xml", options: options)
    }

    /// The error importing `bytes` throws, as a HealthError.
    static func importError(_ bytes: [UInt8], name: String = "export.zip") -> HealthError? {
        do {
            _ = try importing(bytes, name: name)
            return nil
        } catch let error as HealthError {
            return error
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    /// Every row of `batches` as (type, unit, start, end, value, source, uuid).
    static func rows(_ batches: [SampleBatch]) -> [Row] {
        batches.flatMap { batch in
            (0..<batch.count).map { i in
                Row(
                    type: batch.typeIdentifier, unit: batch.unit, start: batch.starts[i], end: batch.ends[i],
                    value: batch.values[i], source: batch.sources[Int(batch.sourceIndices[i])],
                    uuid: batch.uuid(row: i),
                    metadata: batch.metadata?[i] ?? [:])
            }
        }
    }

    struct Row: Equatable {
        var type: String
        var unit: String
        var start: Timestamp
        var end: Timestamp
        var value: Double
        var source: SourceInfo
        var uuid: UUID
        var metadata: [String: MetadataValue]
    }

    /// The instant of a local calendar time at a UTC offset of `offsetHours`, computed with Foundation's calendar
    /// (independently of the importer's date arithmetic).
    static func instant(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0,
        offsetHours: Int = 0
    ) -> Timestamp {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offsetHours * 3600)!
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return Timestamp(calendar.date(from: components)!.timeIntervalSince1970) * Micros.second
    }
}
