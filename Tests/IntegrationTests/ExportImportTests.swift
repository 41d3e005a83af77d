import Foundation
import HealthClient
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

        let first = try HKQBinaryTests.hkq(server + ["import", path, "--format", "json"])
        #expect(first.status == 0, "\(first.err)")
        #expect(first.err.isEmpty, "no progress bar on a pipe: \(first.err)")
        let summary = try Self.object(first.out)
        #expect(summary["new"] as? Int == 25_963)
        #expect(summary["alreadyStored"] as? Int == 0)

        let info = try await hkd.client().serverInfo()
        let perType = Dictionary(uniqueKeysWithValues: info.samplesPerType.map { ($0.type, Int($0.samples)) })
        #expect(
            perType == [
                "distanceWalkingRunning": 12_371, "stepCount": 12_250, "flightsClimbed": 1_338, "bodyMass": 2,
                "height": 1, "bodyMassIndex": 1,
            ])

        let day = ["--from", "2017-07-13T00:00:00-04:00", "--to", "2017-07-14T00:00:00-04:00"]
        let stats = try HKQBinaryTests.hkq(server + ["stats", "stepCount", "--format", "json"] + day)
        #expect(try Self.object(stats.out)["sum"] as? Double == 16_393, "\(stats.out)\(stats.err)")

        #expect(await hkd.stop() == 0)
        let restarted = try await hkd.restart()
        let again = try HKQBinaryTests.hkq(
            restarted.hkqServer + ["--subject", "rob", "import", path])
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("(0 new, 25963 already stored)"), "\(again.out)")
        let total = try await restarted.client().serverInfo().samplesPerType.reduce(0) { $0 + $1.samples }
        #expect(total == 25_963)
        await restarted.stop()
    }
}
