import Foundation
import HealthCodec
import HealthModel
import Testing

@testable import HealthImport

@Suite("Zip and file reading")
struct ZipReadingTests {
    static let body = [
        Fixtures.record(value: "10"),
        Fixtures.record(value: "20", start: "2017-01-21 16:00:00 -0400", end: "2017-01-21 16:05:00 -0400"),
    ].joined(separator: "\n")

    /// What importing the two-record document gives, whatever the container.
    static func expectTwoSteps(_ result: (batches: [SampleBatch], summary: ImportSummary)) {
        #expect(result.summary.imported == ["stepCount": 2])
        #expect(Fixtures.rows(result.batches).map(\.value) == [10, 20])
    }

    @Test("deflated, stored and zip64 archives, and a plain export.xml, import the same samples")
    func containers() throws {
        let xml = Fixtures.document(Self.body)
        let deflated = try Fixtures.importing(Fixtures.zip(xml))
        let stored = try Fixtures.importing(Fixtures.zip(xml, method: 0))
        let zip64 = try Fixtures.importing(Fixtures.zip(xml, zip64: true))
        let plain = try Fixtures.importing(Array(xml.utf8), name: "export.xml")
        for result in [deflated, stored, zip64, plain] { Self.expectTwoSteps(result) }
        #expect(deflated.batches == stored.batches)
        #expect(deflated.batches == zip64.batches)
        #expect(deflated.batches == plain.batches)
    }

    @Test("the export is found under another folder name, with a comment after the directory, and with a BOM")
    func otherLayouts() throws {
        let xml = Array(Fixtures.document(Self.body).utf8)
        let renamed = ZipWriter.archive(
            [
                .init(name: "__MACOSX/apple_health_export/export.xml", data: Array("junk".utf8)),
                .init(name: "Export/export.xml", data: xml),
            ], comment: "made by a test")
        Self.expectTwoSteps(try Fixtures.importing(renamed))
        Self.expectTwoSteps(try Fixtures.importing([0xEF, 0xBB, 0xBF] + xml, name: "export.xml"))
    }

    @Test("a large stored entry streams through in many reads and matches its CRC")
    func largeEntry() throws {
        let records = (0..<12_000).map { i in
            Fixtures.record(
                value: "\(i % 100)", start: "2017-01-21 15:53:00 -0400", end: "2017-01-21 15:58:00 -0400",
                source: "s\(i)")
        }
        let xml = Fixtures.document(records.joined(separator: "\n"))
        #expect(xml.utf8.count > 2_500_000)
        for method: UInt16 in [0, 8] {
            let result = try Fixtures.importing(
                Fixtures.zip(xml, method: method), options: ImportOptions(batchSize: 5_000))
            #expect(result.summary.imported == ["stepCount": 12_000])
            #expect(result.batches.map(\.count) == [5_000, 5_000, 2_000])
            #expect(result.batches[0].sources.count == 5_000)
        }
    }

    @Test("a file that is not an export names itself and what is missing")
    func notAnExport() throws {
        let pdf = Fixtures.importError(Array("%PDF-1.7\n%âãÏÓ\n1 0 obj".utf8), name: "x.pdf")
        #expect(pdf?.code == .invalidArgument)
        #expect(pdf?.message == #""x.pdf" is not an Apple Health export (no apple_health_export/export.xml inside)"#)

        let noExport = Fixtures.importError(
            ZipWriter.archive([.init(name: "photos/cat.jpg", data: [1, 2, 3])]), name: "photos.zip")
        #expect(
            noExport?.message
                == #""photos.zip" is not an Apple Health export (no apple_health_export/export.xml inside)"#)

        let otherXML = Fixtures.importError(
            Array("<?xml version=\"1.0\"?>\n<gpx version=\"1.1\"></gpx>".utf8), name: "route.gpx")
        #expect(otherXML?.code == .invalidArgument)
        #expect(otherXML?.message.contains("root element <gpx>, expected <HealthData>") == true)

        #expect(Fixtures.importError([], name: "empty.zip")?.code == .invalidArgument)
    }

    @Test("a missing file and a directory are clear errors")
    func missingFile() throws {
        let directory = try Fixtures.TemporaryDirectory()
        #expect(throws: HealthError(.invalidArgument, #""nope.zip": no such file"#)) {
            _ = try ExportReader(path: directory.url.appendingPathComponent("nope.zip").path, subject: "anna")
        }
        let error = #expect(throws: HealthError.self) {
            _ = try ExportReader(path: directory.url.path, subject: "anna")
        }
        #expect(error?.message.contains("is a directory") == true)
    }

    @Test("a zip truncated anywhere is reported as truncated or damaged", arguments: [0.3, 0.6, 0.95, 0.999])
    func truncated(fraction: Double) throws {
        let archive = Fixtures.zip(Fixtures.document(Self.body))
        let cut = Array(archive.prefix(Int(Double(archive.count) * fraction)))
        let error = try #require(Fixtures.importError(cut))
        #expect(error.code == .malformedPayload)
        #expect(error.message.hasPrefix(#""export.zip" is truncated"#))
    }

    @Test("a zip whose directory survives but whose data is cut off is truncated")
    func dataCutOff() throws {
        // The directory says the entry is 10 MB long; the file holds far less.
        let xml = Array(Fixtures.document(Self.body).utf8)
        var archive = ZipWriter.archive([.init(name: "apple_health_export/export.xml", data: xml, method: 0)])
        // Patch the compressed size in the central directory (offset 20 of its entry) to 10 MB.
        let central = archive.count - 22 - 46 - "apple_health_export/export.xml".utf8.count
        archive.replaceSubrange(central + 20..<central + 24, with: [0x00, 0x00, 0xA0, 0x00])
        let error = try #require(Fixtures.importError(archive))
        #expect(error.code == .malformedPayload)
        #expect(error.message.contains("export.xml runs past the end of the file"))
    }

    @Test("corrupt deflate data is reported with zlib's reason")
    func corruptDeflate() throws {
        let xml = Array(Fixtures.document(Self.body).utf8)
        // 0xFF opens a final block of type 3, which does not exist.
        let archive = ZipWriter.archive(
            [
                .init(
                    name: "apple_health_export/export.xml", data: xml,
                    rawOverride: [0xFF] + Array(repeating: 0xAB, count: 100))
            ])
        let error = try #require(Fixtures.importError(archive))
        #expect(error.code == .malformedPayload)
        #expect(error.message == #""export.zip": export.xml is damaged (zlib: invalid block type)"#)
    }

    @Test("a deflate stream cut short is damaged")
    func shortDeflate() throws {
        let xml = Array(Fixtures.document(Self.body).utf8)
        let full = Zlib.deflate(xml, format: .raw)
        let archive = ZipWriter.archive(
            [.init(name: "apple_health_export/export.xml", data: xml, rawOverride: Array(full.prefix(full.count / 2)))])
        let error = try #require(Fixtures.importError(archive))
        #expect(error.message == #""export.zip": export.xml is damaged (the deflate stream ends early)"#)
    }

    @Test("a CRC-32 or size mismatch is damaged", arguments: [0, 8] as [UInt16])
    func checksums(method: UInt16) throws {
        let xml = Array(Fixtures.document(Self.body).utf8)
        let badCRC = ZipWriter.archive(
            [.init(name: "apple_health_export/export.xml", data: xml, method: method, crcOverride: 0x1234_5678)])
        let crcError = try #require(Fixtures.importError(badCRC))
        #expect(crcError.message.contains("CRC-32 mismatch"))
        #expect(crcError.message.contains("expected 12345678"))

        let larger = ZipWriter.archive(
            [.init(name: "apple_health_export/export.xml", data: xml, method: method, sizeOverride: xml.count + 5)])
        #expect(Fixtures.importError(larger)?.message.contains("directory entry says \(xml.count + 5)") == true)

        let smaller = ZipWriter.archive(
            [.init(name: "apple_health_export/export.xml", data: xml, method: 8, sizeOverride: xml.count - 5)])
        #expect(Fixtures.importError(smaller)?.message.contains("inflates past its declared size") == true)
    }

    @Test("an entry with an unknown compression method or encryption is refused")
    func unsupportedEntries() throws {
        let xml = Array(Fixtures.document(Self.body).utf8)
        var archive = ZipWriter.archive([.init(name: "apple_health_export/export.xml", data: xml, method: 0)])
        let central = archive.count - 22 - 46 - "apple_health_export/export.xml".utf8.count
        archive[central + 10] = 14  // LZMA
        #expect(Fixtures.importError(archive)?.message.contains("compression method 14") == true)
        archive[central + 10] = 0
        archive[central + 8] = 1  // encrypted
        #expect(Fixtures.importError(archive)?.message.contains("encrypted") == true)
    }
}
